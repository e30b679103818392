// The embedded database's commits reach the disk: PGlite's own defaults (fsync off, and a Node
// file system with no fsync) leave them in the page cache, lost to a power cut; and it is
// checkpointed, which single-user PostgreSQL never does until it closes. Each fsync is
// seen where it is made (the `fs` module NODEFS and the template copy call) and named by the file
// it flushes (/proc/self/fd), so a test passes only when the right files are flushed.
import { spawnSync } from 'node:child_process';
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join, relative } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../src/store/open-db.ts';
import { createPglite } from '../src/store/pglite-db.ts';
import { copyTemplate, defaultTemplatePath, makeTemplate } from '../src/store/pglite-template.ts';
import { tempDir } from './support/services.ts';

const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
const realFsync = fs.fsyncSync;

/** Every path fsynced from now on (until afterEach puts the real fsyncSync back). */
function recordFsyncs() {
  const paths: string[] = [];
  fs.fsyncSync = (fd: number) => {
    paths.push(readlinkSync(`/proc/self/fd/${fd}`));
    realFsync(fd);
  };
  // The template copy imports fsyncSync as an ES module binding, which follows the CJS object.
  syncBuiltinESMExports();
  return paths;
}

async function waitUntil(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting for a checkpoint');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function allFiles(root: string): string[] {
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe.runIf(process.platform === 'linux')('the embedded database on disk', () => {
  let dir: ReturnType<typeof tempDir>;
  let template: string;

  beforeAll(async () => {
    dir = tempDir('steward-fsync-');
    // /proc/self/fd names real paths: a linked TMPDIR must not fail the comparisons.
    dir.path = realpathSync(dir.path);
    template = defaultTemplatePath();
    if ((await makeTemplate(template, createPglite)) === 'made') console.log(`made ${template}`);
  }, 120_000);
  afterEach(() => {
    fs.fsyncSync = realFsync;
    syncBuiltinESMExports();
  });
  afterAll(() => dir.remove());

  it('flushes the WAL at each commit, and the data files at the checkpoint of its close', async () => {
    const pg = join(dir.path, 'commits', 'pg');
    const db = await openPglite(pg);
    const flushed = recordFsyncs();
    try {
      expect((await db.query<{ fsync: string }>('show fsync')).rows[0]?.fsync).toBe('on');
      await db.exec('create table notes (body text)');
      flushed.length = 0;
      for (let i = 0; i < 3; i++) await db.query('insert into notes values ($1)', [`note ${i}`]);
      const wal = flushed.filter((path) => relative(pg, path).startsWith('pg_wal/'));
      expect(wal.length).toBeGreaterThanOrEqual(3);
    } finally {
      await db.close();
    }
    expect(flushed).toContain(join(pg, 'global', 'pg_control'));
    expect(flushed.some((path) => relative(pg, path).startsWith('base/'))).toBe(true);
  });

  it('checkpoints while something is written, which single-user PostgreSQL never does by itself', async () => {
    const db = await openPglite(join(dir.path, 'checkpoints', 'pg'), { checkpointEveryMs: 100 });
    try {
      const checkpointLsn = async () =>
        (await db.query<{ lsn: string }>('select checkpoint_lsn::text as lsn from pg_control_checkpoint()'))
          .rows[0]?.lsn;
      const opened = await checkpointLsn();
      await db.exec('create table notes (body text)');
      await waitUntil(async () => (await checkpointLsn()) !== opened);
      // Again for each write, not only once.
      const first = await checkpointLsn();
      await db.query("insert into notes values ('written')");
      await waitUntil(async () => (await checkpointLsn()) !== first);
      // Nothing written since: the position stays where the last checkpoint left it.
      const second = await checkpointLsn();
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await checkpointLsn()).toBe(second);
    } finally {
      await db.close();
    }
  });

  it('flushes what initdb made when there is no template to copy', async () => {
    const pg = join(dir.path, 'initdb', 'pg');
    const flushed = recordFsyncs();
    const db = await openPglite(pg, { template: null });
    await db.close();
    // initdb runs in a folder beside, renamed into place once flushed: each file was flushed there.
    const before = flushed.map((path) => path.replace(/\/pg\.initdb-\d+(?=\/|$)/, '/pg'));
    for (const file of allFiles(pg)) expect(before).toContain(file);
    expect(flushed.lastIndexOf(join(dir.path, 'initdb'))).toBeGreaterThan(
      flushed.findLastIndex((path) => path.includes('/pg.initdb-')),
    );
  }, 60_000);

  const failing = (what: 'fsync' | 'wal-write', pg: string) =>
    spawnSync(process.execPath, [join(import.meta.dirname, 'support', 'fsync-failure-child.ts'), pg, what], {
      encoding: 'utf8',
      timeout: 60_000,
    });

  it.each([
    {
      name: 'a write cannot be flushed',
      what: 'fsync' as const,
      said: (pg: string) => `steward: database: could not flush ${pg}/pg_wal/`,
      why: ' to disk (EIO: i/o error, fsync); stopping so that nothing half-written',
    },
    {
      name: 'the WAL cannot be written (a full disk)',
      what: 'wal-write' as const,
      said: (pg: string) => `steward: database: could not write ${pg}/pg_wal/`,
      why: '(ENOSPC: no space left on device, write); stopping',
    },
  ])('ends the process with one line when $name, before the commit returns', ({ what, said, why }) => {
    const pg = join(dir.path, what, 'pg');
    const child = failing(what, pg);
    expect(child.status).toBe(1);
    expect(child.stdout).not.toContain('the commit returned');
    expect(child.stderr).toContain(said(pg));
    expect(child.stderr).toContain(why);
  });

  it("puts a first open's copy of the template on disk before renaming it into place", () => {
    const pg = join(dir.path, 'copied', 'pg');
    const flushed = recordFsyncs();
    expect(copyTemplate(template, pg)).toBe(true);
    const copying = flushed[0]?.match(/^(.*\.copying-\d+)\//)?.[1];
    expect(copying).toBeDefined();
    const asFinal = flushed.map((path) => path.replace(copying as string, pg));
    // Every file and folder of the database, each before the rename, then the folder holding it.
    for (const file of allFiles(pg)) expect(asFinal.slice(0, -1)).toContain(file);
    expect(asFinal).toContain(pg);
    expect(flushed.at(-1)).toBe(join(dir.path, 'copied'));
  });
});
