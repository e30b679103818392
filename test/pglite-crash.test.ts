// A steward killed mid-work on the embedded database: the next open takes over the lock the dead
// process left, recovers from the WAL (no checkpoint was made since the open), and finds every
// row it had committed. One killed while initdb makes the database leaves no half of it.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPglite } from '../src/store/open-db.ts';
import { tempDir } from './support/services.ts';

const CHILD = join(import.meta.dirname, 'support', 'pglite-crash-child.ts');
const INITDB_CHILD = join(import.meta.dirname, 'support', 'pglite-initdb-child.ts');

describe('the embedded database after a kill', () => {
  it("opens again with every committed row, taking over the dead process's lock", async () => {
    const dir = tempDir('steward-crash-');
    try {
      const pg = join(dir.path, 'pg');
      const child = await new Promise<{ signal: string | null; stdout: string }>((resolve) => {
        execFile(process.execPath, [CHILD, pg, '200'], { timeout: 60_000 }, (error, stdout) =>
          resolve({ signal: error?.signal ?? null, stdout }),
        );
      });
      expect(child).toEqual({ signal: 'SIGKILL', stdout: 'committed 200\n' });
      expect(existsSync(`${pg}.lock`)).toBe(true);
      const db = await openPglite(pg);
      try {
        const { rows } = await db.query<{ count: number; max: number }>(
          'select count(*)::int as count, max(n) as max from notes',
        );
        expect(rows[0]).toEqual({ count: 200, max: 200 });
      } finally {
        await db.close();
      }
    } finally {
      dir.remove();
    }
  }, 60_000);

  // initdb writes PG_VERSION a moment before it ends: cut off in place, it left a folder the next
  // open took for a whole database. It runs beside the folder, which appears only when whole.
  it.each(['files', 'PG_VERSION'])(
    'after a kill while initdb writes (%s), leaves no half database and makes it on the next open',
    async (stage) => {
      const dir = tempDir('steward-initdb-kill-');
      try {
        const pg = join(dir.path, 'pg');
        const child = await new Promise<{ signal: string | null; stdout: string }>((resolve) => {
          execFile(process.execPath, [INITDB_CHILD, pg, stage], { timeout: 60_000 }, (error, stdout) =>
            resolve({ signal: error?.signal ?? null, stdout }),
          );
        });
        expect(child).toEqual({ signal: 'SIGKILL', stdout: '' });
        expect(readdirSync(dir.path).some((name) => name.startsWith('pg.initdb-'))).toBe(true);
        expect(existsSync(pg)).toBe(false);
        const db = await openPglite(pg, { template: null });
        try {
          const { rows } = await db.query<{ n: number }>('select count(*)::int as n from pg_database');
          expect(rows[0]?.n).toBeGreaterThan(0);
        } finally {
          await db.close();
        }
        expect(readdirSync(dir.path)).toEqual(['pg']);
      } finally {
        dir.remove();
      }
    },
    90_000,
  );
});
