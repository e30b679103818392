import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rebuildConversation } from '../src/core/session-events.ts';
import type { Db } from '../src/store/db.ts';
import { loadMigrations, MIGRATIONS_DIR, migrate, schemaStatus } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/open-db.ts';
import { sessionLog } from '../src/store/session-log.ts';
import { backends, tempDir } from './support/services.ts';

const TABLES = [
  'audit_log',
  'budget_notices',
  'budget_overrides',
  'deliveries',
  'digest_runs',
  'matrix_crypto_store',
  'matrix_prompts',
  'matrix_seen_events',
  'matrix_state',
  'permission_requests',
  'schedules',
  'session_events',
  'session_grants',
  'sessions',
  'tool_output_chunks',
  'tool_outputs',
  'usage',
];

/** Everything about the schema that a migration could change, as one comparable value. */
async function schemaSnapshot(db: Db) {
  const columns = await db.query(
    `select table_name, column_name, data_type, is_nullable from information_schema.columns
     where table_schema = 'public' order by table_name, column_name`,
  );
  const indexes = await db.query(
    "select indexname from pg_indexes where schemaname = 'public' order by indexname",
  );
  const ledger = await db.query(
    'select version, name, checksum, applied_at from schema_migrations order by version',
  );
  return { columns: columns.rows, indexes: indexes.rows, ledger: ledger.rows };
}

for (const backend of backends()) {
  describe(`store on ${backend.name}`, () => {
    let db: Db;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ db, cleanup } = await backend.open());
    });
    afterEach(async () => cleanup());

    it('migrates once, and a second run changes nothing', async () => {
      const first = await migrate(db);
      expect(first.map((m) => m.name)).toEqual(loadMigrations().map((m) => m.name));
      const tables = await db.query<{ table_name: string }>(
        "select table_name from information_schema.tables where table_schema = 'public' order by table_name",
      );
      expect(tables.rows.map((r) => r.table_name)).toEqual([...TABLES, 'schema_migrations'].sort());
      const before = await schemaSnapshot(db);
      expect(await migrate(db)).toEqual([]);
      expect(await schemaSnapshot(db)).toEqual(before);
    });

    it('refuses a schema newer than this build knows', async () => {
      await migrate(db);
      await db.query(
        "insert into schema_migrations (version, name, checksum) values (99, '0099_future.sql', 'x')",
      );
      await expect(migrate(db)).rejects.toThrow(
        new RegExp(
          `is at version 99 but this steward knows only up to ${loadMigrations().length}; upgrade steward`,
        ),
      );
    });

    it('refuses a migration file that changed after it was applied', async () => {
      await migrate(db);
      const edited = loadMigrations().map((m) => ({ ...m, checksum: 'changed' }));
      await expect(schemaStatus(db, edited)).rejects.toThrow(
        /0001_initial.sql was changed after it was applied/,
      );
    });

    it('a failing migration leaves nothing half-written', async () => {
      const dir = tempDir();
      try {
        cpSync(MIGRATIONS_DIR, dir.path, { recursive: true });
        writeFileSync(
          join(dir.path, `${String(loadMigrations().length + 1).padStart(4, '0')}_broken.sql`),
          'create table half_written (id int);\ninsert into nowhere values (1);\n',
        );
        await expect(migrate(db, loadMigrations(dir.path))).rejects.toThrow(
          /_broken.sql failed, nothing of it was applied/,
        );
        const half = await db.query("select to_regclass('half_written') is not null as present");
        expect(half.rows[0]).toEqual({ present: false });
        const versions = await db.query<{ version: number }>('select version from schema_migrations');
        expect(versions.rows.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));
      } finally {
        dir.remove();
      }
    });

    it('keeps session_events append-only', async () => {
      await migrate(db);
      const log = sessionLog(db);
      const session = await log.open('console', 'local');
      await log.append(session.id, { kind: 'user_message', text: 'hi', sender: 'owner' });
      await expect(db.query("update session_events set payload = '{}'")).rejects.toThrow(/append-only/);
      await expect(db.query('delete from session_events')).rejects.toThrow(/append-only/);
      await expect(db.query('truncate session_events cascade')).rejects.toThrow(/append-only/);
      expect(await log.events(session.id)).toHaveLength(1);
    });

    it('opens one session per room, even when two callers race', async () => {
      await migrate(db);
      const log = sessionLog(db);
      const opened = await Promise.all(Array.from({ length: 8 }, () => log.open('telegram', 'room-1')));
      expect(new Set(opened.map((s) => s.id)).size).toBe(1);
      const other = await log.open('telegram', 'room-2');
      expect(other.id).not.toBe(opened[0]?.id);
    });

    it('starts a fresh session and keeps the old one in the log', async () => {
      await migrate(db);
      const log = sessionLog(db);
      const old = await log.open('console', 'local');
      await log.append(old.id, { kind: 'user_message', text: 'before', sender: 'owner' });
      const fresh = await log.startFresh('console', 'local');
      expect(fresh.id).not.toBe(old.id);
      expect((await log.open('console', 'local')).id).toBe(fresh.id);
      expect(await log.events(fresh.id)).toEqual([]);
      expect((await log.events(old.id)).map((e) => e.data)).toEqual([
        { kind: 'user_message', text: 'before', sender: 'owner' },
      ]);
    });

    it('rebuilds the conversation from the log alone', async () => {
      await migrate(db);
      const log = sessionLog(db);
      const session = await log.open('console', 'local');
      const call = { id: 'call_1', name: 'current_time', arguments: '{"timezone":"Europe/Oslo"}' };
      await log.append(session.id, {
        kind: 'user_message',
        text: 'what time is it in Oslo?',
        sender: 'owner',
      });
      await log.append(session.id, {
        kind: 'assistant_message',
        text: '',
        toolCalls: [call],
        model: 'm',
        route: 'default',
      });
      await log.append(session.id, { kind: 'tool_started', callId: 'call_1', tool: 'current_time' });
      await log.append(session.id, {
        kind: 'tool_result',
        callId: 'call_1',
        tool: 'current_time',
        content: '09:00',
        isError: false,
      });
      await log.append(session.id, { kind: 'model_error', message: 'a hiccup', route: 'default' });
      await log.append(session.id, {
        kind: 'assistant_message',
        text: 'It is 09:00.',
        model: 'm',
        route: 'default',
      });

      // A new store object over the same database: nothing is carried in memory.
      const events = await sessionLog(db).events(session.id);
      expect(events.map((e) => e.id)).toEqual([...events.map((e) => e.id)].sort((a, b) => a - b));
      expect(rebuildConversation(events)).toEqual([
        { role: 'user', content: 'what time is it in Oslo?' },
        { role: 'assistant', content: '', toolCalls: [call] },
        { role: 'tool', callId: 'call_1', content: '09:00' },
        { role: 'assistant', content: 'It is 09:00.' },
      ]);
    });
  });
}

describe('embedded database', () => {
  it('refuses a second opener of the same folder instead of corrupting it', async () => {
    const dir = tempDir();
    const db = await openPglite(join(dir.path, 'pg'));
    try {
      await expect(openPglite(join(dir.path, 'pg'))).rejects.toThrow(
        new RegExp(`in use by process ${process.pid}; stop that steward first`),
      );
    } finally {
      await db.close();
    }
    const again = await openPglite(join(dir.path, 'pg'));
    await again.close();
    dir.remove();
  });

  it('takes over the lock of a process that is gone', async () => {
    const dir = tempDir();
    writeFileSync(join(dir.path, 'pg.lock'), '999999999');
    const db = await openPglite(join(dir.path, 'pg'));
    await db.close();
    dir.remove();
  });
});
