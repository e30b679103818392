import { describe, expect, it } from 'vitest';
import { createSseParser } from '../src/gateway/sse.ts';

/** Feeds the chunks in order, then ends the stream; returns every payload in order. */
function parse(chunks: string[]): string[] {
  const parser = createSseParser();
  const out: string[] = [];
  for (const chunk of chunks) out.push(...parser.push(chunk));
  out.push(...parser.end());
  return out;
}

const MULTI =
  ': keep-alive comment\n' +
  'event: message\n' +
  'id: 7\n' +
  'data: {"a":1}\n' +
  '\n' +
  'data:first\n' +
  'data: second\n' +
  'retry: 100\n' +
  '\n' +
  'data: café ☕ 😀\n' +
  '\n' +
  'data: [DONE]\n' +
  '\n';
const MULTI_EVENTS = ['{"a":1}', 'first\nsecond', 'café ☕ 😀', '[DONE]'];

describe('createSseParser', () => {
  it('parses a whole multi-event string in one chunk', () => {
    expect(parse([MULTI])).toEqual(MULTI_EVENTS);
  });

  it('gives the same events for every split point into two chunks', () => {
    for (let i = 0; i <= MULTI.length; i++) {
      expect(parse([MULTI.slice(0, i), MULTI.slice(i)]), `split at ${i}`).toEqual(MULTI_EVENTS);
    }
  });

  it('gives the same events for every pair of split points into three chunks', () => {
    for (let i = 0; i <= MULTI.length; i++) {
      for (let j = i; j <= MULTI.length; j++) {
        const chunks = [MULTI.slice(0, i), MULTI.slice(i, j), MULTI.slice(j)];
        expect(parse(chunks), `split at ${i},${j}`).toEqual(MULTI_EVENTS);
      }
    }
  });

  it('gives the same events fed one character at a time', () => {
    expect(parse([...MULTI])).toEqual(MULTI_EVENTS);
  });

  it('returns each event from push as soon as its blank line arrives, not at end()', () => {
    const parser = createSseParser();
    expect(parser.push('data: one\n')).toEqual([]);
    expect(parser.push('\ndata: tw')).toEqual(['one']);
    expect(parser.push('o\n\n')).toEqual(['two']);
    expect(parser.end()).toEqual([]);
  });

  for (const [name, eol] of [
    ['CRLF', '\r\n'],
    ['CR', '\r'],
    ['LF', '\n'],
  ] as const) {
    it(`handles ${name} line endings at every split point`, () => {
      const text = MULTI.replaceAll('\n', eol);
      for (let i = 0; i <= text.length; i++) {
        expect(parse([text.slice(0, i), text.slice(i)]), `split at ${i}`).toEqual(MULTI_EVENTS);
      }
      expect(parse([...text])).toEqual(MULTI_EVENTS);
    });
  }

  it('handles mixed line endings in one stream', () => {
    expect(parse(['data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r'])).toEqual(['a\nb\nc', 'd']);
  });

  it('treats a "\\r\\n" split across two chunks as one line ending', () => {
    // Were "\r" and "\n" two line endings, the blank line between them would end the event at "a".
    expect(parse(['data: a\r', '\ndata: b\r\n\r\n'])).toEqual(['a\nb']);
    const parser = createSseParser();
    expect(parser.push('data: x\r')).toEqual([]);
    expect(parser.push('\n')).toEqual([]);
    // The "\r" already ends the blank line; the "\n" after it adds nothing.
    expect(parser.push('\r')).toEqual(['x']);
    expect(parser.push('')).toEqual([]);
    expect(parser.push('\n')).toEqual([]);
    expect(parser.push('data: y\r\n\r')).toEqual(['y']);
    expect(parser.push('\n\ndata: z\n\n')).toEqual(['z']);
    expect(parser.end()).toEqual([]);
  });

  it('dispatches a CR-terminated event as soon as it is certain, without waiting for more input', () => {
    // After "\r\r" the event is complete whatever comes next: a server using bare CR line endings
    // must not have every event held back until the stream ends.
    const parser = createSseParser();
    expect(parser.push('data: a\r\r')).toEqual(['a']);
    expect(parser.push('data: b\r\r')).toEqual(['b']);
    expect(parser.push('\n')).toEqual([]);
    expect(parser.push('data: c\r')).toEqual([]);
    expect(parser.push('\r')).toEqual(['c']);
    expect(parser.end()).toEqual([]);
  });

  it('joins multi-line data with "\\n"', () => {
    expect(parse(['data: line 1\ndata: line 2\ndata:line 3\n\n'])).toEqual(['line 1\nline 2\nline 3']);
    expect(parse(['data: a\ndata:\ndata: b\n\n'])).toEqual(['a\n\nb']);
  });

  it('accepts `data:` with and without a space, stripping only one space', () => {
    expect(parse(['data:tight\n\ndata: spaced\n\ndata:  two\n\ndata:\ttab\n\n'])).toEqual([
      'tight',
      'spaced',
      ' two',
      '\ttab',
    ]);
  });

  it('keeps colons and trailing spaces in the value', () => {
    expect(parse(['data: {"k": "v:w"} \n\n'])).toEqual(['{"k": "v:w"} ']);
  });

  it('gives an empty payload for an empty data field', () => {
    expect(parse(['data:\n\n'])).toEqual(['']);
    expect(parse(['data: \n\n'])).toEqual(['']);
    // A field line without a colon is the field name with an empty value.
    expect(parse(['data\n\n'])).toEqual(['']);
    expect(parse(['data\ndata: x\n\n'])).toEqual(['\nx']);
  });

  it('ignores comments, event:, id:, retry: and unknown fields', () => {
    const text = ': comment\n:\nevent: delta\nid: 42\nretry: 3000\nfoo: bar\ndata: payload\n\n';
    expect(parse([text])).toEqual(['payload']);
    // Field names are case-sensitive and must match exactly.
    expect(parse(['Data: no\ndatax: no\n data: no\n\n'])).toEqual([]);
  });

  it('emits nothing for blank lines or events without data', () => {
    expect(parse(['\n\n\n'])).toEqual([]);
    expect(parse(['event: ping\nid: 1\n\n: only a comment\n\n'])).toEqual([]);
    expect(parse([])).toEqual([]);
    expect(parse([''])).toEqual([]);
  });

  it('end() flushes a final event that has no trailing blank line', () => {
    expect(parse(['data: last'])).toEqual(['last']);
    expect(parse(['data: last\n'])).toEqual(['last']);
    expect(parse(['data: last\r'])).toEqual(['last']);
    expect(parse(['data: a\n\ndata: b\ndata: c'])).toEqual(['a', 'b\nc']);
    const parser = createSseParser();
    expect(parser.push('data: x\n\ndata: y')).toEqual(['x']);
    expect(parser.end()).toEqual(['y']);
  });

  it('end() without a pending event returns nothing', () => {
    const parser = createSseParser();
    expect(parser.push('data: x\n\n')).toEqual(['x']);
    expect(parser.end()).toEqual([]);
    expect(parse([': trailing comment'])).toEqual([]);
  });

  it('does not lose or repeat events over a long stream of small chunks', () => {
    const payloads = Array.from({ length: 200 }, (_, i) => `{"n":${i},"s":"${'x'.repeat(i % 7)}"}`);
    const text = payloads.map((p) => `data: ${p}\r\n\r\n`).join('');
    const chunks: string[] = [];
    for (let i = 0, size = 1; i < text.length; i += size, size = (size % 13) + 1) {
      chunks.push(text.slice(i, i + size));
    }
    expect(parse(chunks)).toEqual(payloads);
  });
});
