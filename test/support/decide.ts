import type { DecideResult, PermissionDecision, ReplySink } from '../../src/channel/port.ts';
import type { Assistant } from '../../src/core/assistant.ts';

/** The owner's decision, then the resumed turn to its end, as the console channel waits for it. */
export async function decideAndWait(
  assistant: Pick<Assistant, 'decide'>,
  input: { requestId: string; decision: PermissionDecision; channel: string; senderId: string },
  sink: ReplySink,
): Promise<DecideResult> {
  const result = await assistant.decide(input, sink);
  if (result.ok) await result.resumed;
  return result;
}
