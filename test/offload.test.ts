import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDigestBuilder } from '../src/offload/digest.ts';
import { type OutputStore, outputStore } from '../src/offload/output-store.ts';
import type { Db } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { sessionLog } from '../src/store/session-log.ts';
import { embeddedBackend } from './support/services.ts';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n');

function digestOf(text: string, pieces = 1): string {
  const d = createDigestBuilder();
  const size = Math.ceil(text.length / pieces);
  for (let i = 0; i < text.length; i += size) d.push(text.slice(i, i + size));
  return d.finish('shell', 'REF');
}

describe('digest', () => {
  it('summarizes 200,000 lines in under 8 KiB with head, tail and the ref', () => {
    const digest = digestOf(`${numbered(200_000)}\n`, 37);
    expect(Buffer.byteLength(digest)).toBeLessThan(8 * 1024);
    const lines = digest.split('\n');
    expect(lines[0]).toBe(
      `[shell output offloaded: ${Buffer.byteLength(`${numbered(200_000)}\n`)} bytes, 200000 lines.`,
    );
    expect(lines.slice(2, 32)).toEqual(Array.from({ length: 30 }, (_, i) => `line ${i + 1}`));
    expect(lines.slice(-11, -1)).toEqual(Array.from({ length: 10 }, (_, i) => `line ${199_991 + i}`));
    expect(lines.at(-1)).toContain('retrieve_output {"ref": "REF"}');
  });

  it('is the same however the output was split', () => {
    const text = `${numbered(500)}\nerror: disk full\n${numbered(100)}`;
    const whole = digestOf(text, 1);
    for (const pieces of [2, 7, 100, text.length]) expect(digestOf(text, pieces)).toBe(whole);
  });

  it('keeps error-looking lines from between head and tail, bounded', () => {
    const middle = Array.from({ length: 20 }, (_, i) => `step ${i}: FAILED to build module ${i}`);
    const text = [numbered(40), ...middle, numbered(40)].join('\n');
    const digest = digestOf(text);
    expect(digest).toContain('Error-looking lines in between (up to 8):');
    expect(digest.match(/FAILED/g)).toHaveLength(8);
    expect(digest).toContain('41: step 0: FAILED to build module 0');
  });

  it('cuts very long lines, including one 10 MB line, and counts bytes exactly', () => {
    const long = 'x'.repeat(10 * 1024 * 1024);
    const digest = digestOf(`${long}\nshort\n${long}`, 300);
    expect(Buffer.byteLength(digest)).toBeLessThan(2048);
    expect(digest).toContain(`${'x'.repeat(120)}…`);
    expect(digest).toMatch(/^\[shell output offloaded: 20971527 bytes, 3 lines\./);
  });

  it('counts multi-byte characters as UTF-8 bytes', () => {
    expect(digestOf('ø'.repeat(10))).toMatch(/20 bytes, 1 lines/);
  });
});

describe('output store', () => {
  let db: Db;
  let cleanup: () => Promise<void>;
  let store: OutputStore;
  let clock = new Date('2026-11-30T08:00:00Z');
  let sessionId: string;
  beforeEach(async () => {
    ({ db, cleanup } = await embeddedBackend.open());
    await migrate(db);
    clock = new Date('2026-11-30T08:00:00Z');
    store = outputStore(db, () => clock);
    sessionId = (await sessionLog(db).open('test', 'r')).id;
  });
  afterEach(async () => cleanup());

  it('stores a large output in chunks and pages it back by line, across chunk boundaries', async () => {
    const text = numbered(200_000);
    const stored = await store.write({ sessionId, tool: 'shell', trusted: true }, text);
    expect(stored).toMatchObject({ bytes: Buffer.byteLength(text), lines: 200_000 });
    const chunks = await db.query<{ n: number }>(
      'select count(*)::int as n from tool_output_chunks where ref = $1',
      [stored.ref],
    );
    expect(chunks.rows[0]?.n).toBeGreaterThan(5);
    const expected = text.split('\n');
    for (const offset of [0, 1, 26_000, 26_214, 99_999, 199_990]) {
      const page = await store.read(stored.ref, sessionId, offset, 20, 100_000);
      expect(page?.text.split('\n')).toEqual(expected.slice(offset, offset + 20));
      expect(page).toMatchObject({ offset, totalLines: 200_000, trusted: true, tool: 'shell' });
    }
    const past = await store.read(stored.ref, sessionId, 250_000, 20, 100_000);
    expect(past?.count).toBe(0);
    const capped = await store.read(stored.ref, sessionId, 0, 1000, 500);
    expect(capped?.text.length).toBeLessThanOrEqual(501);
  });

  it('streams an iterable source without joining it', async () => {
    async function* source() {
      for (let i = 0; i < 1000; i++) yield `${'y'.repeat(999)}\n`;
    }
    const stored = await store.write({ sessionId, tool: 'gen', trusted: false }, source());
    expect(stored).toMatchObject({ bytes: 1_000_000, lines: 1000 });
    const page = await store.read(stored.ref, sessionId, 500, 1, 10_000);
    expect(page?.text).toBe('y'.repeat(999));
    expect(page?.trusted).toBe(false);
  });

  it('refuses unknown, foreign and expired refs, and collects expired ones', async () => {
    const stored = await store.write({ sessionId, tool: 'shell', trusted: true }, 'a\nb');
    expect(await store.read('not-a-uuid', sessionId, 0, 5, 100)).toBeUndefined();
    expect(await store.read(crypto.randomUUID(), sessionId, 0, 5, 100)).toBeUndefined();
    const other = (await sessionLog(db).open('test', 'other')).id;
    expect(await store.read(stored.ref, other, 0, 5, 100)).toBeUndefined();
    expect((await store.read(stored.ref, sessionId, 0, 5, 100))?.text).toBe('a\nb');
    expect(await store.collect()).toBe(0);
    clock = new Date(clock.getTime() + 7 * 24 * 60 * 60 * 1000 + 1);
    expect(await store.read(stored.ref, sessionId, 0, 5, 100)).toBeUndefined();
    expect(await store.collect()).toBe(1);
    const left = await db.query<{ n: number }>('select count(*)::int as n from tool_output_chunks');
    expect(left.rows[0]?.n).toBe(0);
  });
});
