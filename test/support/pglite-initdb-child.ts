// Run by test/pglite-crash.test.ts: opens the embedded database at argv[2] with no template, so
// the open runs initdb; the test kills it while initdb writes.
import { openPglite } from '../../src/store/pglite-db.ts';

const db = await openPglite(process.argv[2] as string, { template: null });
await db.close();
process.stdout.write('opened\n');
