import { randomUUID } from 'node:crypto';
import { DEFAULT_LIMITS } from '../limits.ts';
import type { Db } from '../store/db.ts';
import { storableText } from '../store/storable.ts';
import { createDigestBuilder } from './digest.ts';

export const DEFAULT_RETENTION_MS = DEFAULT_LIMITS.offload.retentionMs;
/** Stored piece size: large enough for few rows, small enough to keep memory flat. */
const CHUNK_CHARS = 256 * 1024;

export interface StoredOutput {
  ref: string;
  bytes: number;
  lines: number;
  digest: string;
}

export interface OutputPage {
  text: string;
  trusted: boolean;
  tool: string;
  /** The first line returned (0-based), how many, and the total. */
  offset: number;
  count: number;
  totalLines: number;
}

async function* pieces(source: string | AsyncIterable<string>): AsyncGenerator<string> {
  if (typeof source === 'string') {
    for (let i = 0; i < source.length; i += CHUNK_CHARS) yield source.slice(i, i + CHUNK_CHARS);
  } else {
    yield* source;
  }
}

/** Large tool results, kept for a week in chunks, paged back by line. */
export function outputStore(db: Db, now: () => Date, retentionMs = DEFAULT_RETENTION_MS) {
  return {
    /** Streams `source` into the store; memory holds one chunk and the digest's kept lines. */
    async write(
      input: { sessionId: string; tool: string; trusted: boolean },
      source: string | AsyncIterable<string>,
    ): Promise<StoredOutput> {
      const ref = randomUUID();
      const digest = createDigestBuilder();
      await db.query(
        'insert into tool_outputs (ref, session_id, tool, trusted, created_at, expires_at) values ($1, $2, $3, $4, $5, $6)',
        [
          ref,
          input.sessionId,
          storableText(input.tool),
          input.trusted,
          now(),
          new Date(now().getTime() + retentionMs),
        ],
      );
      let seq = 0;
      let buffer = '';
      let bufferFirstLine = 0;
      const flush = async () => {
        if (buffer === '') return;
        await db.query(
          'insert into tool_output_chunks (ref, seq, body, first_line) values ($1, $2, $3, $4)',
          [ref, seq++, buffer, bufferFirstLine],
        );
        buffer = '';
      };
      let linesBefore = 0;
      for await (const raw of pieces(source)) {
        const piece = storableText(raw);
        if (buffer === '') bufferFirstLine = linesBefore;
        buffer += piece;
        for (let i = piece.indexOf('\n'); i !== -1; i = piece.indexOf('\n', i + 1)) linesBefore++;
        digest.push(piece);
        if (buffer.length >= CHUNK_CHARS) await flush();
      }
      await flush();
      const text = digest.finish(input.tool, ref);
      await db.query('update tool_outputs set bytes = $2, lines = $3, complete = true where ref = $1', [
        ref,
        digest.bytes,
        digest.lines,
      ]);
      return { ref, bytes: digest.bytes, lines: digest.lines, digest: text };
    },

    /**
     * Lines [offset, offset + limit) of a stored output of this session, cut at `maxChars`.
     * Undefined when the ref is unknown, expired or another session's.
     */
    async read(
      ref: string,
      sessionId: string,
      offset: number,
      limit: number,
      maxChars: number,
    ): Promise<OutputPage | undefined> {
      if (!/^[0-9a-f-]{36}$/i.test(ref)) return undefined;
      const found = await db.query<{ tool: string; trusted: boolean; lines: number }>(
        `select tool, trusted, lines from tool_outputs
         where ref = $1 and session_id = $2 and complete and expires_at > $3`,
        [ref, sessionId, now()],
      );
      const meta = found.rows[0];
      if (!meta) return undefined;
      // The last chunk that starts before the wanted line: that line's beginning is in it or after it.
      const startChunk = await db.query<{ seq: number; first_line: number }>(
        `select seq, first_line from tool_output_chunks where ref = $1 and first_line < $2
         order by seq desc limit 1`,
        [ref, offset],
      );
      let seq = startChunk.rows[0]?.seq ?? 0;
      let line = startChunk.rows[0]?.first_line ?? 0;
      const out: string[] = [];
      let chars = 0;
      let partial = '';
      while (out.length < limit && chars < maxChars) {
        const chunk = await db.query<{ body: string }>(
          'select body from tool_output_chunks where ref = $1 and seq = $2',
          [ref, seq++],
        );
        const body = chunk.rows[0]?.body;
        if (body === undefined) break;
        const parts = (partial + body).split('\n');
        partial = parts.pop() ?? '';
        for (const text of parts) {
          if (line >= offset && out.length < limit && chars < maxChars) {
            out.push(text);
            chars += text.length + 1;
          }
          line++;
        }
      }
      if (partial !== '' && line >= offset && out.length < limit && chars < maxChars) out.push(partial);
      let text = out.join('\n');
      if (text.length > maxChars) text = `${text.slice(0, maxChars)}…`;
      return {
        text,
        trusted: meta.trusted,
        tool: meta.tool,
        offset,
        count: out.length,
        totalLines: Number(meta.lines),
      };
    },

    /** Removes outputs past their retention; returns how many. */
    async collect(): Promise<number> {
      const removed = await db.query<{ ref: string }>(
        'delete from tool_outputs where expires_at <= $1 returning ref',
        [now()],
      );
      return removed.rows.length;
    },
  };
}

export type OutputStore = ReturnType<typeof outputStore>;
