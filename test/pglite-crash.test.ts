// A steward killed mid-work on the embedded database: the next open takes over the lock the dead
// process left, recovers from the WAL (no checkpoint was made since the open), and finds every
// row it had committed.
import { execFile, spawn } from 'node:child_process';
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

  // initdb writes PG_VERSION late, a moment before it ends: a kill then left a folder the next
  // open took for a whole database, and often could not start.
  it('after a kill while initdb was writing, makes the database again and opens', async () => {
    const dir = tempDir('steward-initdb-kill-');
    try {
      const pg = join(dir.path, 'pg');
      const child = spawn(process.execPath, [INITDB_CHILD, pg], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.on('exit', (_code, signal) => resolve(signal)),
      );
      let output = '';
      child.stdout.on('data', (chunk) => {
        output += chunk;
      });
      const written = () =>
        readdirSync(dir.path).some((name) => existsSync(join(dir.path, name, 'PG_VERSION')));
      for (const deadline = Date.now() + 30_000; !written(); await new Promise((r) => setTimeout(r, 2)))
        if (Date.now() > deadline) throw new Error('initdb never wrote PG_VERSION');
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      expect(output).toBe('');
      // The folder looks like a database, and the mark beside it says it is not yet one.
      expect(existsSync(join(pg, 'PG_VERSION'))).toBe(true);
      expect(existsSync(`${pg}.initdb`)).toBe(true);
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
  }, 90_000);
});
