// Run by test/pglite-fsync.test.ts: opens the embedded database at argv[2], then fails, as a dying
// or full disk would, every fsync (argv[3] "fsync") or every write into pg_wal ("wal-write"), and
// commits once more.
import { readlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { openPglite } from '../../src/store/open-db.ts';

const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
const db = await openPglite(process.argv[2] as string);
await db.exec('create table notes (body text)');
if (process.argv[3] === 'fsync') {
  fs.fsyncSync = () => {
    throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
  };
} else {
  const write = fs.writeSync;
  fs.writeSync = ((fd: number, ...rest: never[]) => {
    if (readlinkSync(`/proc/self/fd/${fd}`).includes('/pg_wal/'))
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    return (write as (...args: unknown[]) => number)(fd, ...rest);
  }) as typeof fs.writeSync;
}
await db.query("insert into notes values ('lost to the disk')");
process.stdout.write('the commit returned\n');
