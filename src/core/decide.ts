// The owner's answer to a prompt: recorded at once (one transaction), the waiting turn resumed as
// a separate promise, so a button press is acknowledged before the turn goes on.
import type { DecideResult, PermissionDecision, ReplySink } from '../channel/port.ts';
import { type Core, driveQueued, isOwner } from './core.ts';

export async function decide(
  core: Core,
  input: { requestId: string; decision: PermissionDecision; channel: string; senderId: string },
  sink: ReplySink,
): Promise<DecideResult> {
  if (!isOwner(core, input.channel, input.senderId)) {
    core.log.info(
      { channel: input.channel },
      'ignored a permission decision from someone other than the owner',
    );
    return { ok: false, reason: 'not_owner', text: 'Not allowed: only the owner decides.' };
  }
  const settled = await core.loop.approvals.settle(input.requestId, input.decision, input.senderId);
  if (!settled.ok) {
    const text = {
      unknown: 'That request is unknown.',
      settled: `That request was already settled (${settled.request?.decision ?? 'closed'}).`,
      expired: 'That request has expired; nothing was run.',
    }[settled.reason];
    const { request } = settled;
    if (settled.reason === 'expired' && request) {
      // The turn still waits on it: resuming closes it as a timeout so the turn can finish.
      const session = await core.sessions.get(request.sessionId);
      if (session) void resume(core, driveQueued(core, session, request.turnId, sink));
    }
    return { ok: false, reason: settled.reason, text };
  }
  const { request } = settled;
  await sink({
    type: 'permission_settled',
    requestId: request.id,
    decision: input.decision,
    decidedBy: input.senderId,
  });
  const session = await core.sessions.get(request.sessionId);
  if (!session) return { ok: true, resumed: Promise.resolve() };
  return { ok: true, resumed: resume(core, driveQueued(core, session, request.turnId, sink)) };
}

/** A resumed turn never rejects at the channel: a stop leaves it for the next start to resume. */
function resume(core: Core, turn: Promise<unknown>): Promise<void> {
  return turn.then(
    () => {},
    (error: Error) => core.log.warn(`a resumed turn stopped: ${error.message}`),
  );
}
