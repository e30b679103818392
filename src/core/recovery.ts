// After a restart, and on a timer: turns a crash or a stop cut off are resumed, and questions
// nobody answered in time are settled as timeouts. Both run once per process, from `start`.
import type { PermissionPrompt, ReplySink } from '../channel/port.ts';
import { dangerLevel } from '../permissions/gate.ts';
import type { Session } from '../store/session-log.ts';
import { STEWARD } from './approvals.ts';
import { type Core, driveIn, type Outbox, UNATTENDED_SENDER } from './core.ts';

/**
 * Queues every turn a crash or a stop cut off (of one channel, or all) in its room, and returns
 * once they are queued, with a promise for when they are done. A channel takes new input only
 * after this, so a resumed turn is never overtaken by a message that would supersede it. The
 * sweeper calls it again for turns a failure stranded while steward ran (the database went away
 * mid-turn): inside the room's queue a turn that has ended or is driven meanwhile is left alone.
 */
export async function queueRecovery(
  core: Core,
  outbox: Outbox,
  channel?: string,
  notice = 'Resuming a turn that a restart cut off.',
): Promise<Promise<void>> {
  const { sessions } = core;
  const resumed: Promise<void>[] = [];
  const open = await sessions.openTurns();
  for (const { sessionId, turnId } of open) {
    const session = await sessions.get(sessionId);
    if (!session || (channel !== undefined && session.channel !== channel)) continue;
    const sink = outbox(session.channel, session.room);
    if (!sink) continue;
    const waiting = (await core.requests.forTurn(turnId)).some(
      (r) => r.status === 'pending' && r.expiresAt > core.now(),
    );
    if (waiting) continue;
    // A digest's turn was unattended when it began and stays so: nobody is there to ask.
    const begun = await resumableAs(core, session, turnId);
    if (begun === 'closed') continue;
    const unattended = begun === 'unattended';
    const room = unattended ? postOnly(sink, core) : sink;
    const turn = core.runner.inRoom(session.channel, session.room, async (signal) => {
      if (core.driving.has(turnId) || !(await stillOpen(core, turnId))) return;
      core.log.info({ sessionId, turnId }, 'resuming a turn that was cut off');
      await room({ type: 'notice', level: 'info', text: notice });
      await driveIn(core, session, turnId, room, { unattended, recovered: true }, signal);
    });
    resumed.push(turn.catch((error: Error) => core.log.warn(`could not resume a turn: ${error.message}`)));
  }
  return Promise.all(resumed).then(() => {});
}

/**
 * Before a new message supersedes what is open in its session: a turn a failure cut off (not one
 * waiting for the owner) is finished first, so the earlier message is answered, not dropped.
 * Called inside the room's queue.
 */
export async function resumeStranded(
  core: Core,
  session: Session,
  sink: ReplySink,
  signal: AbortSignal,
): Promise<void> {
  for (const { turnId } of await core.sessions.openTurns(session.id)) {
    if (core.driving.has(turnId) || !(await stillOpen(core, turnId))) continue;
    const begun = await resumableAs(core, session, turnId);
    if (begun === 'closed') continue;
    const unattended = begun === 'unattended';
    const room = unattended ? postOnly(sink, core) : sink;
    core.log.info({ sessionId: session.id, turnId }, 'finishing a cut-off turn before the next message');
    await room({ type: 'notice', level: 'info', text: 'Finishing a turn that a failure cut off.' });
    await driveIn(core, session, turnId, room, { unattended, recovered: true }, signal);
  }
}

/**
 * Who began the turn, read where a turn reads. `closed`: its message lies before that window (a
 * compaction written before folds stopped at open turns took it in), so it cannot be driven from
 * the log; it is closed as failed, with a line in the log, instead of answering without its question.
 */
async function resumableAs(
  core: Core,
  session: Session,
  turnId: string,
): Promise<'owner' | 'unattended' | 'closed'> {
  const begun = (await core.sessions.recent(session.id)).find(
    (e) => e.turnId === turnId && e.data.kind === 'user_message',
  );
  if (begun?.data.kind === 'user_message')
    return begun.data.sender === UNATTENDED_SENDER ? 'unattended' : 'owner';
  await core.sessions.append(session.id, { kind: 'turn_ended', outcome: 'failed' }, turnId);
  core.log.warn(
    { sessionId: session.id, turnId },
    'closed a cut-off turn whose message an older compaction folded',
  );
  return 'closed';
}

/**
 * A digest's room gets only what the digest runner lets through when the turn first runs: the
 * turn's frame and its final reply. Tool activity and prompts are for the owner; an error notice
 * (the resumed digest failed) goes to the owner's room, as the runner reports a failed fire.
 */
export function postOnly(sink: ReplySink, core: Pick<Core, 'owner'>): ReplySink {
  return (event) => {
    switch (event.type) {
      case 'turn_started':
      case 'turn_ended':
      case 'reply':
        return sink(event);
      case 'notice':
        return event.level === 'error'
          ? core.owner.notify(`A digest resumed after a restart: ${event.text}`)
          : undefined;
      default:
        return undefined;
    }
  };
}

/** The turn has no `turn_ended` and waits for no unexpired question (read inside its room's queue). */
async function stillOpen(core: Core, turnId: string): Promise<boolean> {
  if (!(await core.sessions.isOpen(turnId))) return false;
  return !(await core.requests.forTurn(turnId)).some(
    (r) => r.status === 'pending' && r.expiresAt > core.now(),
  );
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
      await driveIn(core, session, request.turnId, sink, { unattended: false }, signal);
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
