import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StoreError } from '../errors.ts';
import type { Db } from './db.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Reads `NNNN_name.sql` files in order; a gap or a stray file is a packaging error, caught early. */
export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  return files.map((file, index) => {
    const match = FILE_NAME.exec(file);
    if (!match) throw new StoreError(`migrations: ${file} is not named NNNN_name.sql; rename it`);
    const version = Number(match[1]);
    if (version !== index + 1) {
      throw new StoreError(
        `migrations: ${file} should be number ${index + 1}; versions must run 1, 2, 3 … without gaps`,
      );
    }
    const sql = readFileSync(join(dir, file), 'utf8');
    return { version, name: file, sql, checksum: createHash('sha256').update(sql).digest('hex') };
  });
}

export interface SchemaStatus {
  current: number;
  latest: number;
  pending: Migration[];
}

const LEDGER = `create table if not exists schema_migrations (
  version integer primary key,
  name text not null,
  checksum text not null,
  applied_at timestamptz not null default now()
)`;

// Any constant works; it keeps two stewards starting at once from applying the same file twice.
const MIGRATION_LOCK = 4_711_2026;

/** Where the database stands against the migrations this build carries. Refuses a newer schema. */
export async function schemaStatus(db: Db, migrations: Migration[]): Promise<SchemaStatus> {
  const applied = await appliedMigrations(db);
  const latest = migrations.length;
  const current = applied.reduce((max, row) => Math.max(max, row.version), 0);
  if (current > latest) {
    throw new StoreError(
      `database: the schema at ${db.location} is at version ${current} but this steward knows only up to ${latest}; upgrade steward, or point it at another database`,
    );
  }
  for (const row of applied) {
    const known = migrations[row.version - 1];
    if (known && known.checksum !== row.checksum) {
      throw new StoreError(
        `database: migration ${known.name} was changed after it was applied to ${db.location}; restore the original file and add a new migration instead`,
      );
    }
  }
  const done = new Set(applied.map((row) => row.version));
  return { current, latest, pending: migrations.filter((m) => !done.has(m.version)) };
}

/** Applies pending migrations, each in its own transaction. Running it again changes nothing. */
export async function migrate(db: Db, migrations = loadMigrations()): Promise<Migration[]> {
  await db.exec(LEDGER);
  const { pending } = await schemaStatus(db, migrations);
  const applied: Migration[] = [];
  for (const migration of pending) {
    const ran = await db.transaction(async (tx) => {
      await tx.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const seen = await tx.query('select 1 from schema_migrations where version = $1', [migration.version]);
      if (seen.rows.length > 0) return false;
      try {
        await tx.exec(migration.sql);
      } catch (error) {
        throw new StoreError(
          `migrations: ${migration.name} failed, nothing of it was applied: ${(error as Error).message}`,
        );
      }
      await tx.query('insert into schema_migrations (version, name, checksum) values ($1, $2, $3)', [
        migration.version,
        migration.name,
        migration.checksum,
      ]);
      return true;
    });
    if (ran) applied.push(migration);
  }
  return applied;
}

async function appliedMigrations(db: Db): Promise<Array<{ version: number; checksum: string }>> {
  const exists = await db.query<{ present: boolean }>(
    "select to_regclass('schema_migrations') is not null as present",
  );
  if (!exists.rows[0]?.present) return [];
  const result = await db.query<{ version: number; checksum: string }>(
    'select version, checksum from schema_migrations order by version',
  );
  return result.rows;
}
