// Service-backed suites: under CI=true a missing service fails the run; elsewhere the suite is
// skipped with a printed reason, never silently.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Db } from '../../src/store/db.ts';
import { openPglite, openPostgres } from '../../src/store/open-db.ts';

const HOW = 'run eval "$(bash scripts/test-services.sh)" first';

export function postgresUrl(): string | undefined {
  const url = process.env.STEWARD_TEST_DATABASE_URL;
  if (url) return url;
  if (process.env.CI === 'true') throw new Error(`CI=true but STEWARD_TEST_DATABASE_URL is not set; ${HOW}`);
  console.warn(`skipping PostgreSQL tests: STEWARD_TEST_DATABASE_URL is not set (${HOW})`);
  return undefined;
}

export interface MatrixEnv {
  homeserver: string;
  botToken: string;
  /** The owner's MXID. */
  owner: string;
  ownerToken: string;
  strangerToken: string;
}

/** The Synapse that scripts/test-services.sh starts, with its three users' access tokens. */
export function matrixEnv(): MatrixEnv | undefined {
  const e = process.env;
  const env = {
    homeserver: e.STEWARD_TEST_MATRIX_HOMESERVER,
    botToken: e.STEWARD_TEST_MATRIX_BOT_TOKEN,
    owner: e.STEWARD_TEST_MATRIX_OWNER,
    ownerToken: e.STEWARD_TEST_MATRIX_OWNER_TOKEN,
    strangerToken: e.STEWARD_TEST_MATRIX_STRANGER_TOKEN,
  };
  if (Object.values(env).every((v) => v)) return env as MatrixEnv;
  if (process.env.CI === 'true')
    throw new Error(`CI=true but the STEWARD_TEST_MATRIX_* variables are not set; ${HOW}`);
  console.warn(`skipping Matrix tests: STEWARD_TEST_MATRIX_HOMESERVER and its tokens are not set (${HOW})`);
  return undefined;
}

/** A database of its own for one test, dropped afterwards. */
export async function freshPostgres(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `steward_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export function tempDir(prefix = 'steward-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface Backend {
  name: 'pglite' | 'postgres';
  /** A new, empty database; `cleanup` closes and removes it. */
  open(): Promise<{ db: Db; cleanup(): Promise<void> }>;
}

/** PGlite always; PostgreSQL when the test service is there (and required under CI=true). */
export const embeddedBackend: Backend = {
  name: 'pglite',
  async open() {
    const dir = tempDir();
    const db = await openPglite(join(dir.path, 'pg'));
    return {
      db,
      async cleanup() {
        await db.close();
        dir.remove();
      },
    };
  },
};

export function backends(): Backend[] {
  const list: Backend[] = [embeddedBackend];
  const url = postgresUrl();
  if (url) {
    list.push({
      name: 'postgres',
      async open() {
        const fresh = await freshPostgres(url);
        const db = await openPostgres(fresh.url);
        return {
          db,
          async cleanup() {
            await db.close();
            await fresh.drop();
          },
        };
      },
    });
  }
  return list;
}
