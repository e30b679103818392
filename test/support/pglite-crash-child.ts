// Run by test/pglite-crash.test.ts: commits argv[3] rows into the embedded database at argv[2],
// one commit each, then dies by SIGKILL without closing it (no shutdown checkpoint, lock left).
import { openPglite } from '../../src/store/open-db.ts';

const db = await openPglite(process.argv[2] as string);
await db.exec('create table notes (n integer primary key)');
const rows = Number(process.argv[3]);
for (let n = 1; n <= rows; n++) await db.query('insert into notes values ($1)', [n]);
process.stdout.write(`committed ${rows}\n`);
process.kill(process.pid, 'SIGKILL');
