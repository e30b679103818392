// The embedded database's commits reach the disk: PGlite's own defaults (fsync off, and a Node
// file system with no fsync) leave them in the page cache, lost to a power cut. Each fsync is
// seen where it is made (the `fs` module NODEFS and the template copy call) and named by the file
// it flushes (/proc/self/fd), so a test passes only when the right files are flushed.
import { readdirSync, readlinkSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join, relative } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../src/store/open-db.ts';
import { createPglite } from '../src/store/pglite-db.ts';
import { copyTemplate, defaultTemplatePath, makeTemplate } from '../src/store/pglite-template.ts';
import { tempDir } from './support/services.ts';

const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
const realFsync = fs.fsyncSync;

/** Every path fsynced from now until `stop`. */
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
    template = defaultTemplatePath();
    if ((await makeTemplate(template, createPglite)) === 'made') console.log(`made ${template}`);
  }, 120_000);
  afterEach(() => {
    fs.fsyncSync = realFsync;
    syncBuiltinESMExports();
  });
  afterAll(() => dir.remove());

  it('flushes the WAL to disk at each commit, with fsync on', async () => {
    const pg = join(dir.path, 'commits', 'pg');
    const db = await openPglite(pg);
    try {
      expect((await db.query<{ fsync: string }>('show fsync')).rows[0]?.fsync).toBe('on');
      await db.exec('create table notes (body text)');
      const flushed = recordFsyncs();
      for (let i = 0; i < 3; i++) await db.query('insert into notes values ($1)', [`note ${i}`]);
      const wal = flushed.filter((path) => relative(pg, path).startsWith('pg_wal/'));
      expect(wal.length).toBeGreaterThanOrEqual(3);
    } finally {
      await db.close();
    }
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
