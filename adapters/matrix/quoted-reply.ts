// A quoted reply in Matrix (m.relates_to.m.in_reply_to): when the message replied to was written
// by someone other than the owner, it reaches the model fenced with its author as the source.
import type { InboundQuote } from '../../src/channel/port.ts';
import { stripReplyFallback } from './commands.ts';
import type { MatrixOps } from './matrix-ops.ts';

/**
 * Read from the homeserver (decrypted in encrypted rooms); if it cannot be read, the reply's own
 * quoted fallback lines stand in for it. The owner's own messages and the bot's (already in the
 * conversation the model sees) are not quotes.
 */
export async function quotedReply(
  deps: { ops: Pick<MatrixOps, 'event'>; owner: string; botId: string },
  room: string,
  eventId: string,
  body: string,
): Promise<InboundQuote | undefined> {
  const quoted = await deps.ops.event(room, eventId).catch(() => undefined);
  if (quoted) {
    if (quoted.sender === deps.owner || quoted.sender === deps.botId) return undefined;
    const text = typeof quoted.content.body === 'string' ? stripReplyFallback(quoted.content.body) : '';
    return text === '' ? undefined : { origin: `quoted from ${quoted.sender}`, text };
  }
  return fallbackQuote(body, [deps.owner, deps.botId]);
}

/** The `> <@author> text` lines a client puts at the top of a reply. Pure. */
export function fallbackQuote(body: string, notQuotes: readonly string[]): InboundQuote | undefined {
  const lines: string[] = [];
  for (const line of body.split('\n')) {
    if (!line.startsWith('>')) break;
    lines.push(line.replace(/^> ?/, ''));
  }
  if (lines.length === 0) return undefined;
  const author = /^<(@[^>]+)>\s?/.exec(lines[0] ?? '');
  if (author?.[1] !== undefined && notQuotes.includes(author[1])) return undefined;
  if (author) lines[0] = (lines[0] as string).slice(author[0].length);
  return { origin: `quoted from ${author?.[1] ?? 'an unknown sender'}`, text: lines.join('\n') };
}
