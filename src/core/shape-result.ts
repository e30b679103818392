// What the model gets for a result: small ones inline, large ones stored with a digest in their
// place, and anything an outsider may have written fenced as data.
import type { ToolOutcome } from '../tools/run-tool.ts';
import { fence } from '../trust/fence.ts';
import type { LoopDeps, TurnContext } from './turn-types.ts';

/** Errors are the harness's own prose and pass as they are; `fenced` says the content was not. */
export async function shapeResult(
  deps: Pick<LoopDeps, 'limits' | 'outputs'>,
  turn: TurnContext,
  toolName: string,
  toolTrusted: boolean,
  outcome: ToolOutcome,
): Promise<{ text: string; fenced: boolean }> {
  if (!outcome.ok) return { text: outcome.content, fenced: false };
  const trusted = outcome.trusted ?? toolTrusted;
  const { offload } = deps.limits;
  const limit = offload.thresholdBytes[toolName] ?? offload.defaultBytes;
  const small = await takeIfSmall(outcome.content, limit);
  let text: string;
  if (small.done) text = small.text;
  else {
    const stored = await deps.outputs.write(
      { sessionId: turn.session.id, tool: toolName, trusted },
      small.rest,
    );
    await turn.sink({
      type: 'output_offloaded',
      ref: stored.ref,
      tool: toolName,
      bytes: stored.bytes,
      lines: stored.lines,
    });
    text = stored.digest;
  }
  return trusted ? { text, fenced: false } : { text: fence(text, toolName), fenced: true };
}

/** Reads a result up to `limit` bytes; past that, hands back everything as one stream to store. */
async function takeIfSmall(
  content: string | AsyncIterable<string>,
  limit: number,
): Promise<{ done: true; text: string } | { done: false; rest: string | AsyncIterable<string> }> {
  if (typeof content === 'string') {
    return Buffer.byteLength(content) <= limit
      ? { done: true, text: content }
      : { done: false, rest: content };
  }
  const iterator = content[Symbol.asyncIterator]();
  const head: string[] = [];
  let bytes = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) return { done: true, text: head.join('') };
    head.push(next.value);
    bytes += Buffer.byteLength(next.value);
    if (bytes > limit) break;
  }
  async function* rest() {
    yield* head;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { done: false, rest: rest() };
}
