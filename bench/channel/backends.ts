// Where a benchmarked steward keeps its state: a PGlite folder, or a private PostgreSQL database
// on the test server (STEWARD_TEST_DATABASE_URL), created for the run and dropped afterwards.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshPostgres } from '../../test/support/services.ts';

export type BackendName = 'pglite' | 'postgres';

export interface State {
  /** The environment that points steward at it (and at its own data folder). */
  env: Record<string, string>;
  /** The folder steward runs in. */
  cwd: string;
  remove(): Promise<void>;
}

export async function freshState(backend: BackendName): Promise<State> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-'));
  const env = { STEWARD_DATA_DIR: join(dir, 'data') };
  if (backend === 'pglite') {
    return { env, cwd: dir, remove: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const admin = process.env.STEWARD_TEST_DATABASE_URL;
  if (!admin)
    throw new Error('channel bench: set STEWARD_TEST_DATABASE_URL for PostgreSQL, or BENCH_BACKENDS=pglite');
  const db = await freshPostgres(admin);
  return {
    env: { ...env, STEWARD_DATABASE_URL: db.url },
    cwd: dir,
    async remove() {
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
