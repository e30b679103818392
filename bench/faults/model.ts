// The scripted model of the fault suite. An owner message `T<k>` becomes a multi-step turn: text
// streamed while a tool runs (`marks__mark`), every `askEvery`th turn a second call that asks the
// owner (`marks__mark_asked`), then a final answer streamed in pieces. A digest prompt reads the
// clock once and posts what it read, so a digest resumed from the log posts the same words and
// two fires never do.
import type { ScriptStep } from '../../test/support/scripted-model.ts';
import { sseEvent, wireChunk } from '../../test/support/scripted-model.ts';

export const DIGEST_PROMPT = 'DIGEST';
export const answerText = (marker: string) => `Answer ${marker}: all steps done, nothing left to do.`;
/** A digest's post; a prompt `DIGEST <name>` names its digest in it, so digests of one minute differ. */
export const digestText = (utc: string, name?: string) =>
  name ? `Digest ${name} at ${utc}` : `Digest at ${utc}`;

interface Msg {
  role: string;
  content?: string | null;
  tool_calls?: Array<{ function: { name: string } }>;
}

export interface FaultModelOptions {
  /** Every n-th turn asks the owner (0: never). */
  askEvery: number;
  /** Pause between streamed pieces. */
  pauseMs: number;
  /** Number of streamed pieces of the final answer. */
  pieces?: number;
  /** No tools: one streamed answer (load runs). */
  plain?: boolean;
}

function streamed(
  text: string,
  pieces: number,
  pauseMs: number,
  call?: { name: string; args: string },
): ScriptStep {
  const raw: string[] = [sseEvent(wireChunk({ role: 'assistant', content: '' }))];
  const size = Math.max(1, Math.ceil(text.length / pieces));
  for (let i = 0; i < text.length; i += size)
    raw.push(sseEvent(wireChunk({ content: text.slice(i, i + size) })));
  if (call) {
    raw.push(
      sseEvent(
        wireChunk({
          tool_calls: [
            {
              index: 0,
              id: `c${Math.random().toString(36).slice(2, 10)}`,
              type: 'function',
              function: { name: call.name, arguments: call.args },
            },
          ],
        }),
      ),
    );
  }
  raw.push(sseEvent(wireChunk({}, call ? 'tool_calls' : 'stop')));
  raw.push(
    sseEvent({
      id: 'c1',
      object: 'chat.completion.chunk',
      choices: [],
      usage: { prompt_tokens: 20, completion_tokens: 10 },
    }),
  );
  raw.push('data: [DONE]\n\n');
  return { raw, pauseMs };
}

export function faultModel(options: FaultModelOptions) {
  const pieces = options.pieces ?? 6;
  return (body: Record<string, unknown>): ScriptStep => {
    const messages = (body.messages ?? []) as Msg[];
    let lastUser = -1;
    messages.forEach((m, i) => {
      if (m.role === 'user') lastUser = i;
    });
    const userText = String(messages[lastUser]?.content ?? '');
    const after = messages.slice(lastUser + 1);
    const results = after.filter((m) => m.role === 'tool');
    if (userText.includes(DIGEST_PROMPT)) {
      const read = results.map((m) => /UTC: (\S+)/.exec(String(m.content))?.[1]).find(Boolean);
      const name = new RegExp(`${DIGEST_PROMPT} (\\w+)`).exec(userText)?.[1];
      if (read) return streamed(digestText(read, name), 3, options.pauseMs);
      return streamed('', 1, 0, { name: 'current_time', args: '{}' });
    }
    const marker = /T\d+/.exec(userText)?.[0] ?? 'T?';
    if (options.plain) return streamed(answerText(marker), pieces, options.pauseMs);
    const k = Number(marker.slice(1));
    if (results.length === 0)
      return streamed(`Working on ${marker}.`, 3, options.pauseMs, {
        name: 'marks__mark',
        args: JSON.stringify({ id: `${marker}-a` }),
      });
    if (results.length === 1 && options.askEvery > 0 && k % options.askEvery === 0)
      return streamed('', 1, 0, { name: 'marks__mark_asked', args: JSON.stringify({ id: `${marker}-b` }) });
    return streamed(answerText(marker), pieces, options.pauseMs);
  };
}
