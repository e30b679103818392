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
      try {
        // A backend the test role may not terminate (a server process still winding down on the
        // database, seen once under load) makes `force` refuse; it is gone a moment later.
        for (let attempt = 1; ; attempt++) {
          try {
            await c.query(`drop database if exists ${name} with (force)`);
            return;
          } catch (error) {
            if ((error as { code?: string }).code !== '42501' || attempt >= 20) throw error;
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
        }
      } finally {
        await c.end();
      }
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

export interface PrivatePostgres {
  url: string;
  /** `pg_ctl stop -m fast`: every connection is cut and new ones are refused. */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * A PostgreSQL cluster of one suite's own, on a free loopback port, that the suite may stop and
 * start without touching the shared test server. Needs STEWARD_TEST_PG_BIN (test-services.sh).
 */
export async function privatePostgres(): Promise<PrivatePostgres | undefined> {
  const bin = process.env.STEWARD_TEST_PG_BIN;
  if (!bin) {
    if (process.env.CI === 'true') throw new Error(`CI=true but STEWARD_TEST_PG_BIN is not set; ${HOW}`);
    console.warn(`skipping private PostgreSQL tests: STEWARD_TEST_PG_BIN is not set (${HOW})`);
    return undefined;
  }
  const { execFileSync } = await import('node:child_process');
  const { chmodSync, chownSync } = await import('node:fs');
  const { createServer } = await import('node:net');
  const dir = tempDir('steward-pg-');
  const data = join(dir.path, 'data');
  const root = process.getuid?.() === 0;
  // PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres user.
  const as = (args: string[]) => {
    if (!root) return execFileSync(args[0] as string, args.slice(1), { stdio: 'pipe' });
    const line = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
    return execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', line], { stdio: 'pipe' });
  };
  if (root) {
    const { uid, gid } = JSON.parse(
      execFileSync('sh', [
        '-c',
        'printf \'{"uid":%s,"gid":%s}\' "$(id -u postgres)" "$(id -g postgres)"',
      ]).toString(),
    ) as { uid: number; gid: number };
    chownSync(dir.path, uid, gid);
    chmodSync(dir.path, 0o700);
  }
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as { port: number };
      probe.close(() => resolve(free));
    });
  });
  as([join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'steward', '--no-sync']);
  const options = `-p ${port} -k ${dir.path} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = async () => {
    as([join(bin, 'pg_ctl'), '-D', data, '-o', options, '-w', '-l', join(dir.path, 'log'), 'start']);
  };
  const stop = async () => {
    as([join(bin, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop']);
  };
  await start();
  return {
    url: `postgres://steward@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async destroy() {
      await stop().catch(() => {});
      dir.remove();
    },
  };
}
