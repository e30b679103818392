import type { PGlite } from '@electric-sql/pglite';

// PGlite runs PostgreSQL in single-user mode, which has no checkpointer: no checkpoint happens
// between the open and the close, whatever max_wal_size says (60,000 commits of 2 KB grew pg_wal
// to eight 16 MB segments with max_wal_size 32MB, the checkpoint still the open's). A steward that
// runs for months would keep every byte it ever wrote in pg_wal, and a start after a crash would
// replay all of it. Checkpoints are therefore asked for here, when something was written since the
// last one; each flushes the data files (a few MB of buffers) and lets old WAL be recycled.

/** Checkpoints `pglite` every `everyMs` while WAL advances; `stop` waits for one under way. */
export function periodicCheckpoints(
  pglite: Pick<PGlite, 'query' | 'exec'>,
  everyMs: number,
  warn: (line: string) => void = () => {},
) {
  const position = async () =>
    (await pglite.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]?.lsn;
  // What the open itself wrote needs no checkpoint of its own.
  let last: Promise<string | undefined> = position();
  let running: Promise<void> | undefined;
  const checkpoint = async () => {
    const before = await last;
    if ((await position()) === before) return;
    // One call, so no other caller's write lands between the checkpoint and the position read.
    const [, after] = await pglite.exec('checkpoint; select pg_current_wal_lsn()::text as lsn');
    last = Promise.resolve((after?.rows[0] as { lsn?: string } | undefined)?.lsn);
  };
  const timer = setInterval(() => {
    running ??= checkpoint()
      .catch((error: Error) => {
        try {
          warn(`database: a checkpoint failed: ${error.message}`);
        } catch {}
      })
      .finally(() => {
        running = undefined;
      });
  }, everyMs);
  timer.unref();
  return {
    async stop(): Promise<void> {
      clearInterval(timer);
      await last.catch(() => {});
      await running;
    },
  };
}
