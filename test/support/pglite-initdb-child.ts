// Run by test/pglite-crash.test.ts: opens the embedded database at argv[2] with no template, so
// the open runs initdb, and dies by SIGKILL mid-way: after initdb's 100th write (argv[3] "files")
// or right after it writes PG_VERSION ("PG_VERSION"), which comes a moment before it ends.
import { readlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { openPglite } from '../../src/store/pglite-db.ts';

const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
const write = fs.writeSync;
let writes = 0;
fs.writeSync = ((fd: number, ...rest: never[]) => {
  const written = (write as (...args: unknown[]) => number)(fd, ...rest);
  writes++;
  const stage = process.argv[3];
  if (
    (stage === 'files' && writes === 100) ||
    (stage === 'PG_VERSION' && readlinkSync(`/proc/self/fd/${fd}`).endsWith('/PG_VERSION'))
  )
    process.kill(process.pid, 'SIGKILL');
  return written;
}) as typeof fs.writeSync;

const db = await openPglite(process.argv[2] as string, { template: null });
await db.close();
process.stdout.write('opened\n');
