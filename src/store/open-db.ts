import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from './db.ts';
import type { PgliteOptions } from './pglite-db.ts';

// Each driver loads only when its database is opened: a PostgreSQL steward never loads PGlite's
// wasm, a PGlite one never loads pg, and commands that need no database load neither.

/** PostgreSQL when a URL is given, else the embedded PGlite database under `dataDir/pg`. */
export async function openDb(opts: {
  databaseUrl?: string;
  dataDir: string;
  warn?: (line: string) => void;
}): Promise<Db> {
  return opts.databaseUrl
    ? openPostgres(opts.databaseUrl)
    : openPglite(join(opts.dataDir, 'pg'), opts.warn ? { warn: opts.warn } : {});
}

export function embeddedDbPath(dataDir: string): string {
  return join(dataDir, 'pg');
}

/**
 * Something is at the embedded database's path, a link too (even one to nothing), so that a check
 * opens it and meets what `start` would, instead of reporting a database yet to be made.
 */
export function embeddedDbPresent(dataDir: string): boolean {
  try {
    lstatSync(embeddedDbPath(dataDir));
    return true;
  } catch {
    return false;
  }
}

export async function openPostgres(url: string): Promise<Db> {
  return (await import('./postgres-db.ts')).openPostgres(url);
}

export async function openPglite(dir: string, options?: PgliteOptions): Promise<Db> {
  return (await import('./pglite-db.ts')).openPglite(dir, options);
}
