import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { maskUrl, redact } from '../config/secrets.ts';
import { StoreError } from '../errors.ts';
import type { Db, Queryable, QueryResult } from './db.ts';

/** PostgreSQL when a URL is given, else the embedded PGlite database under `dataDir/pg`. */
export async function openDb(opts: { databaseUrl?: string; dataDir: string }): Promise<Db> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl) : openPglite(join(opts.dataDir, 'pg'));
}

export function embeddedDbPath(dataDir: string): string {
  return join(dataDir, 'pg');
}

const INT8 = 20;

export async function openPostgres(url: string): Promise<Db> {
  const location = maskUrl(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: 5,
    connectionTimeoutMillis: 5000,
    // Ids are identity columns far below 2^53; numbers keep both backends returning the same shapes.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  try {
    await pool.query('select 1');
  } catch (error) {
    await pool.end().catch(() => {});
    throw new StoreError(
      redact(
        `database: cannot connect to ${location}: ${postgresReason(error)}; check STEWARD_DATABASE_URL and that PostgreSQL is running`,
        [url],
      ),
    );
  }
  const wrap = (client: pg.Pool | pg.PoolClient): Queryable => ({
    query: async <T>(sql: string, params?: unknown[]) =>
      wrapErrors(async () => (await client.query(sql, params)) as unknown as QueryResult<T>),
    exec: async (sql) => {
      await wrapErrors(() => client.query(sql));
    },
  });
  return {
    kind: 'postgres',
    location,
    ...wrap(pool),
    async transaction(work) {
      const client = await pool.connect().catch((error: unknown) => {
        throw new StoreError(`database: cannot connect to ${location}: ${postgresReason(error)}`);
      });
      try {
        await client.query('begin');
        const result = await work(wrap(client));
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

async function wrapErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof StoreError) throw error;
    const pgError = error as { message?: string; code?: string };
    const wrapped = new StoreError(`database: ${pgError.message ?? String(error)}`);
    Object.assign(wrapped, { code: pgError.code });
    throw wrapped;
  }
}

function postgresReason(error: unknown): string {
  const e = error as { code?: string; message?: string };
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case '28P01':
    case '28000':
      return 'authentication failed (wrong user or password)';
    case '3D000':
      return 'the database does not exist (create it first)';
    default:
      return (e.message ?? String(error)).split('\n')[0] ?? 'unknown error';
  }
}

export async function openPglite(dir: string): Promise<Db> {
  mkdirSync(dir, { recursive: true });
  const release = takeLock(`${dir}.lock`, dir);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dir);
  } catch (error) {
    release();
    throw new StoreError(
      `database: cannot open the embedded database at ${dir}: ${(error as Error).message}`,
    );
  }
  const wrap = (client: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    query: async (sql, params) => wrapErrors(async () => client.query(sql, params)),
    exec: async (sql) => {
      await wrapErrors(() => client.exec(sql));
    },
  });
  return {
    kind: 'pglite',
    location: dir,
    ...wrap(pglite),
    transaction: (work) => pglite.transaction((tx) => work(wrap(tx))),
    async close() {
      await pglite.close();
      release();
    },
  };
}

/**
 * PGlite is one process's database: a second process opening the same folder would corrupt it.
 * A pid file makes the second one stop with a clear message instead.
 */
function takeLock(lockPath: string, dir: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new StoreError(`database: cannot lock ${dir}: ${(error as Error).message}`);
      }
      const holder = Number(readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && processAlive(holder)) {
        throw new StoreError(
          `database: the embedded database at ${dir} is in use by process ${holder}; stop that steward first, or set STEWARD_DATABASE_URL to share one PostgreSQL`,
        );
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new StoreError(`database: cannot lock ${dir}; remove ${lockPath} if no steward is running`);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
