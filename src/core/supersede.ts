import type { ReplySink } from '../channel/port.ts';
import type { PermissionRequests } from '../store/permission-requests.ts';
import type { Session, SessionLog } from '../store/session-log.ts';
import { openTurnIds, turnState } from './turn-state.ts';

/**
 * A new message while a turn waits for the owner closes that turn: its waiting questions expire
 * and its calls get "not run" results, so the log stays a valid conversation.
 */
export async function supersedeOpenTurns(
  deps: { sessions: SessionLog; requests: PermissionRequests; now: () => Date },
  session: Session,
  sink: ReplySink,
): Promise<void> {
  const { sessions, requests, now } = deps;
  const events = await sessions.events(session.id);
  for (const turnId of openTurnIds(events)) {
    const state = turnState(events, turnId);
    await requests.expireTurn(turnId, now());
    for (const call of state.openCalls) {
      await sessions.append(
        session.id,
        {
          kind: 'tool_result',
          callId: call.id,
          tool: call.name,
          content: 'Not run: the owner sent a new message instead of deciding.',
          isError: true,
        },
        turnId,
      );
    }
    await sessions.append(session.id, { kind: 'turn_ended', outcome: 'superseded' }, turnId);
    if (state.openCalls.length > 0) {
      await sink({
        type: 'notice',
        level: 'info',
        text: 'The earlier question was dropped: you sent a new message.',
      });
    }
  }
}
