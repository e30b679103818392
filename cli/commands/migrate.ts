import { migrate } from '../../src/store/migrate.ts';
import { openDb } from '../../src/store/open-db.ts';
import type { CliIo } from '../io.ts';
import { loadRuntime } from '../runtime.ts';

export async function migrateCommand(io: CliIo): Promise<number> {
  const { config } = loadRuntime(io);
  const db = await openDb(config);
  try {
    const applied = await migrate(db);
    for (const m of applied) io.stdout.write(`applied ${m.name}\n`);
    io.stdout.write(
      applied.length > 0
        ? `${db.location}: schema is up to date\n`
        : `${db.location}: schema is up to date; nothing to apply\n`,
    );
    return 0;
  } finally {
    await db.close();
  }
}
