// Run by test/pglite-fsync.test.ts: opens the embedded database at argv[2], then makes every
// fsync fail as a dying disk would, and commits once more.
import { createRequire } from 'node:module';
import { openPglite } from '../../src/store/open-db.ts';

const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
const db = await openPglite(process.argv[2] as string);
await db.exec('create table notes (body text)');
fs.fsyncSync = () => {
  throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
};
await db.query("insert into notes values ('lost to the disk')");
process.stdout.write('the commit returned\n');
