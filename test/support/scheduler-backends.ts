// The databases the scheduler tests run on. Like backends(), but PostgreSQL also hands out its URL,
// which the pg-boss engine needs for its own pool.
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openPostgres } from '../../src/store/open-db.ts';
import { embeddedBackend, freshPostgres, postgresUrl } from './services.ts';

export interface OpenedStore {
  db: Db;
  /** Set on PostgreSQL: the scheduler runs pg-boss there. */
  url?: string;
  /** Another pool on the same database, as a second steward would have. */
  another(): Promise<Db>;
  cleanup(): Promise<void>;
}

export interface SchedulerBackend {
  name: 'pglite' | 'postgres';
  engine: 'lease' | 'pg-boss';
  open(): Promise<OpenedStore>;
}

export function schedulerBackends(): SchedulerBackend[] {
  const list: SchedulerBackend[] = [
    {
      name: 'pglite',
      engine: 'lease',
      async open() {
        const { db, cleanup } = await embeddedBackend.open();
        await migrate(db);
        return {
          db,
          another: () => Promise.reject(new Error('PGlite belongs to one process')),
          cleanup,
        };
      },
    },
  ];
  const admin = postgresUrl();
  if (admin) list.push({ name: 'postgres', engine: 'pg-boss', open: () => openPostgresStore(admin) });
  return list;
}

export async function openPostgresStore(adminUrl: string): Promise<OpenedStore> {
  const fresh = await freshPostgres(adminUrl);
  const pools: Db[] = [];
  const open = async () => {
    const db = await openPostgres(fresh.url);
    pools.push(db);
    return db;
  };
  const db = await open();
  await migrate(db);
  return {
    db,
    url: fresh.url,
    another: open,
    async cleanup() {
      for (const pool of pools) await pool.close();
      await fresh.drop();
    },
  };
}
