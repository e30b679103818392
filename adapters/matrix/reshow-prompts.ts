// After a restart: a question still waiting whose prompt never reached Matrix (steward stopped
// after the core recorded the question and before the prompt was posted, or before it was stored)
// is posted now. Without this the owner has nothing to answer, and the turn waits until the
// question times out or a new message drops it.
import type { ChannelPort, ReplySink } from '../../src/channel/port.ts';
import type { Logger } from '../../src/log.ts';
import { MATRIX_CHANNEL } from './inbound.ts';
import type { MatrixStateStore } from './state-store.ts';

export interface ReshowDeps {
  assistant: Pick<ChannelPort, 'pendingPrompts'>;
  state: Pick<MatrixStateStore, 'promptByRequest'>;
  /** The rooms the bot is in: turns happen only there. */
  rooms(): Promise<string[]>;
  sinkFor(room: string): ReplySink;
  log: Logger;
}

/** Posts every waiting question of the bot's rooms that has no prompt stored; returns how many. */
export async function reshowPrompts(deps: ReshowDeps): Promise<number> {
  let posted = 0;
  for (const room of await deps.rooms()) {
    for (const prompt of await deps.assistant.pendingPrompts(MATRIX_CHANNEL, room)) {
      if (await deps.state.promptByRequest(prompt.requestId)) continue;
      await deps.sinkFor(room)({ type: 'permission_prompt', prompt });
      posted++;
    }
  }
  if (posted) deps.log.info({ posted }, 'matrix: posted again the questions a restart cut off');
  return posted;
}
