// Peak memory while a 100 MB tool output is written to the store: it must stay bounded (a chunk
// and the digest's kept lines), not grow with the output. Real store (PGlite), streamed source.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputStore } from '../src/offload/output-store.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/open-db.ts';
import { sessionLog } from '../src/store/session-log.ts';

const MB = 1024 * 1024;

async function measure(totalMb: number) {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-'));
  const db = await openPglite(join(dir, 'pg'));
  try {
    await migrate(db);
    const sessionId = (await sessionLog(db).open('bench', 'r')).id;
    const store = outputStore(db, () => new Date());
    const line = `${'build step output '.repeat(5)}\n`;
    const perPiece = Math.floor((64 * 1024) / line.length);
    const piece = line.repeat(perPiece);
    const pieces = Math.ceil((totalMb * MB) / piece.length);
    const baseline = process.memoryUsage();
    let peakRss = baseline.rss;
    let peakHeap = baseline.heapUsed;
    // Sampled from inside the stream: the embedded database answers without yielding to timers.
    const sample = () => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    };
    async function* source() {
      for (let i = 0; i < pieces; i++) {
        if (i % 16 === 0) sample();
        yield piece;
      }
    }
    const started = performance.now();
    const stored = await store.write({ sessionId, tool: 'bench', trusted: true }, source());
    const seconds = (performance.now() - started) / 1000;
    sample();
    return {
      outputMb: Math.round((stored.bytes / MB) * 10) / 10,
      lines: stored.lines,
      digestBytes: Buffer.byteLength(stored.digest),
      seconds: Math.round(seconds * 100) / 100,
      mbPerSecond: Math.round((stored.bytes / MB / seconds) * 10) / 10,
      peakHeapGrowthMb: Math.round(((peakHeap - baseline.heapUsed) / MB) * 10) / 10,
      peakRssGrowthMb: Math.round(((peakRss - baseline.rss) / MB) * 10) / 10,
    };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A 20 MB and a 100 MB output: bounded memory means the peak does not grow fivefold with them. */
export async function offloadMemory() {
  const small = await measure(20);
  const large = await measure(100);
  return {
    name: 'offload-memory',
    store: 'pglite',
    runs: [small, large],
    heapGrowthRatio100to20:
      Math.round((large.peakHeapGrowthMb / Math.max(small.peakHeapGrowthMb, 0.1)) * 100) / 100,
    goal: 'peak memory bounded: the ratio stays near 1, far from 5',
    note: "heap is steward's own; RSS also holds the embedded database engine and its page cache",
  };
}
