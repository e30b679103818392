// After a restart, and on a timer: turns a crash or a stop cut off are resumed, and questions
// nobody answered in time are settled as timeouts. Both run once per process, from `start`.
import type { PermissionPrompt } from '../channel/port.ts';
import { dangerLevel } from '../permissions/gate.ts';
import { STEWARD } from './approvals.ts';
import { type Core, driveIn, type Outbox, UNATTENDED_SENDER } from './core.ts';

/**
 * Queues every turn a crash or a stop cut off (of one channel, or all) in its room, and returns
 * once they are queued, with a promise for when they are done. A channel takes new input only
 * after this, so a resumed turn is never overtaken by a message that would supersede it.
 */
export async function queueRecovery(core: Core, outbox: Outbox, channel?: string): Promise<Promise<void>> {
  const { sessions } = core;
  const resumed: Promise<void>[] = [];
  for (const { sessionId, turnId } of await sessions.openTurns()) {
    const session = await sessions.get(sessionId);
    if (!session || (channel !== undefined && session.channel !== channel)) continue;
    const sink = outbox(session.channel, session.room);
    if (!sink) continue;
    const waiting = (await core.requests.forTurn(turnId)).some(
      (r) => r.status === 'pending' && r.expiresAt > core.now(),
    );
    if (waiting) continue;
    // A digest's turn was unattended when it began and stays so: nobody is there to ask.
    const events = await sessions.events(session.id);
    const unattended = events.some(
      (e) => e.turnId === turnId && e.data.kind === 'user_message' && e.data.sender === UNATTENDED_SENDER,
    );
    const turn = core.runner.inRoom(session.channel, session.room, async (signal) => {
      await sink({ type: 'notice', level: 'info', text: 'Resuming a turn that a restart cut off.' });
      await driveIn(core, session, turnId, sink, unattended, signal);
    });
    resumed.push(turn.catch((error: Error) => core.log.warn(`could not resume a turn: ${error.message}`)));
  }
  return Promise.all(resumed).then(() => {});
}

export async function recover(core: Core, outbox: Outbox): Promise<void> {
  await await queueRecovery(core, outbox);
}

export async function expireOverdue(core: Core, outbox: Outbox): Promise<number> {
  let expired = 0;
  for (const request of await core.requests.overdue(core.now())) {
    const session = await core.sessions.get(request.sessionId);
    const sink = session && outbox(session.channel, session.room);
    if (!session || !sink) continue;
    await core.runner.inRoom(session.channel, session.room, async (signal) => {
      const { event } = await core.loop.approvals.expire(request.id);
      if (!event) return; // someone settled it first
      expired++;
      await sink({
        type: 'permission_settled',
        requestId: request.id,
        decision: 'timeout',
        decidedBy: STEWARD,
      });
      await sink({
        type: 'notice',
        level: 'info',
        text: `No answer in time, so ${request.tool} was not run.`,
      });
      await driveIn(core, session, request.turnId, sink, false, signal);
    });
  }
  return expired;
}

export async function pendingPrompts(core: Core, channel: string, room: string): Promise<PermissionPrompt[]> {
  const session = await core.sessions.open(channel, room);
  return (await core.requests.waiting(session.id, core.now())).map((r) => ({
    requestId: r.id,
    tool: r.tool,
    args: r.canonical,
    score: r.score,
    level: dangerLevel(r.score),
    layer: r.layer,
    rationale: r.rationale,
  }));
}
