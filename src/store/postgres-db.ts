import pg from 'pg';
import { maskUrl, redact } from '../config/secrets.ts';
import { StoreError } from '../errors.ts';
import type { Db, Queryable, QueryResult } from './db.ts';
import { wrapErrors } from './db-errors.ts';
import { storableParams } from './storable.ts';

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
      wrapErrors(async () => (await client.query(sql, storableParams(params))) as unknown as QueryResult<T>),
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
