// A first open copies the empty database `npm ci` made (scripts/pglite-template.ts) instead of
// running initdb; without a finished template of this PGlite, it runs initdb as before.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/open-db.ts';
import { createPglite } from '../src/store/pglite-db.ts';
import { copyTemplate, makeTemplate } from '../src/store/pglite-template.ts';
import { tempDir } from './support/services.ts';

describe('the empty database template', () => {
  let dir: ReturnType<typeof tempDir>;
  let template: string;

  beforeAll(async () => {
    dir = tempDir();
    template = join(dir.path, 'cache', 'pglite');
    expect(await makeTemplate(template, createPglite)).toBe('made');
  }, 120_000);
  afterAll(() => dir.remove());

  it('is made once: a finished template is left as it is', async () => {
    expect(await makeTemplate(template, createPglite)).toBe('present');
    expect(existsSync(join(template, 'PG_VERSION'))).toBe(true);
  });

  /** The cluster's identity, which initdb makes anew and a copy keeps. */
  const identity = async (db: Db) =>
    (await db.query<{ id: string }>('select system_identifier::text as id from pg_control_system()')).rows[0]
      ?.id;

  it('is what a first open copies, instead of running initdb', async () => {
    const made = await openPglite(join(dir.path, 'made', 'pg'), { template: null });
    const copied = await openPglite(join(dir.path, 'copied', 'pg'), { template });
    const templateDb = await createPglite(join(dir.path, 'copy-of-template'));
    await templateDb.close();
    const again = await openPglite(join(dir.path, 'copied-again', 'pg'), { template });
    expect(await identity(copied)).toBe(await identity(again));
    expect(await identity(made)).not.toBe(await identity(copied));
    await Promise.all([made.close(), copied.close(), again.close()]);
    // The copy is the owner's alone, as PostgreSQL keeps its data folder.
    expect(statSync(join(dir.path, 'copied', 'pg')).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir.path, 'copied', 'pg', 'PG_VERSION')).mode & 0o777).toBe(0o600);
  }, 120_000);

  it('gives each first open a database of its own, and later opens use their own files', async () => {
    const a = join(dir.path, 'a', 'pg');
    const b = join(dir.path, 'b', 'pg');
    const first = await openPglite(a, { template });
    await migrate(first);
    await first.exec("create table note (text text); insert into note values ('only in a')");
    await first.close();
    expect(existsSync(join(a, 'steward-template'))).toBe(false);

    const other = await openPglite(b, { template });
    const tables = await other.query<{ n: number }>(
      "select count(*)::int as n from pg_tables where tablename = 'note'",
    );
    expect(tables.rows[0]?.n).toBe(0);
    await other.close();

    const again = await openPglite(a, { template });
    expect((await again.query<{ text: string }>('select text from note')).rows).toEqual([
      { text: 'only in a' },
    ]);
    await again.close();
    // The template itself is untouched.
    expect(copyTemplate(template, join(dir.path, 'c', 'pg'))).toBe(true);
    const fresh = await openPglite(join(dir.path, 'c', 'pg'), { template });
    expect(
      (await fresh.query<{ n: number }>("select count(*)::int as n from pg_tables where tablename = 'note'"))
        .rows[0]?.n,
    ).toBe(0);
    await fresh.close();
  });

  it.each([
    ['no template at all', () => undefined],
    ['a template cut off before it was finished', () => half(dir.path)],
    ['a template another PGlite made', () => otherVersion(dir.path, template)],
  ])('is not used when there is %s', (_case, path) => {
    const target = join(dir.path, `unused-${Math.random().toString(36).slice(2)}`, 'pg');
    expect(copyTemplate(path(), target)).toBe(false);
    expect(existsSync(target)).toBe(false);
  });

  it('never writes into a folder that already holds something', () => {
    const target = join(dir.path, 'busy', 'pg');
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, 'keep'), 'mine');
    expect(copyTemplate(template, target)).toBe(false);
    expect(readFileSync(join(target, 'keep'), 'utf8')).toBe('mine');
  });

  it('never replaces a link to an empty folder (the database belongs where it points)', () => {
    const elsewhere = join(dir.path, 'other-disk');
    mkdirSync(elsewhere);
    const link = join(dir.path, 'linked', 'pg');
    mkdirSync(join(dir.path, 'linked'));
    symlinkSync(elsewhere, link);
    expect(copyTemplate(template, link)).toBe(false);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it('a copy that fails leaves nothing behind, and the open runs initdb and says why', async () => {
    const broken = join(dir.path, 'broken');
    copyTemplate(template, broken);
    writeFileSync(join(broken, 'steward-template'), readFileSync(join(template, 'steward-template')));
    // A socket cannot be copied.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(broken, 'sock'), resolve));
    const target = join(dir.path, 'fallback', 'pg');
    const warnings: string[] = [];
    const db = await openPglite(target, { template: broken, warn: (line) => warnings.push(line) });
    server.close();
    expect(warnings).toEqual([expect.stringMatching(/could not copy the empty database .* initdb/)]);
    expect(existsSync(join(target, 'sock'))).toBe(false);
    expect((await db.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
    await db.close();
  }, 120_000);

  it('runs initdb in a folder that exists (a mount point), keeping its lost+found', async () => {
    const target = join(dir.path, 'mounted', 'pg');
    mkdirSync(join(target, 'lost+found'), { recursive: true });
    const db = await openPglite(target, { template: null });
    try {
      expect((await db.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
    expect(existsSync(join(target, 'PG_VERSION'))).toBe(true);
    expect(statSync(join(target, 'lost+found')).isDirectory()).toBe(true);
  }, 120_000);

  it.each([{ template: null }, {}])(
    'refuses a folder holding files but no database, or a link, and leaves them as they are (%o)',
    async (options) => {
      const root = join(dir.path, `refused-${'template' in options ? 'initdb' : 'copy'}`);
      const busy = join(root, 'busy', 'pg');
      mkdirSync(busy, { recursive: true });
      writeFileSync(join(busy, 'postgresql.conf'), 'mine');
      const own = { ...options, ...('template' in options ? {} : { template }) };
      await expect(openPglite(busy, own)).rejects.toThrow(
        /^database: cannot open the embedded database at .*busy\/pg: it holds files but no database \(no PG_VERSION: postgresql\.conf\); move them out of it, or use PostgreSQL with STEWARD_DATABASE_URL$/,
      );
      expect(readFileSync(join(busy, 'postgresql.conf'), 'utf8')).toBe('mine');
      expect(readdirSync(join(root, 'busy'))).toEqual(['pg']);

      const elsewhere = join(root, 'disk');
      mkdirSync(elsewhere);
      mkdirSync(join(root, 'linked'));
      const link = join(root, 'linked', 'pg');
      symlinkSync('../disk', link);
      await expect(openPglite(link, own)).rejects.toThrow(
        /^database: cannot open the embedded database at .*linked\/pg: it is a symbolic link \(to \/.*\/disk\), and the lock beside it would not guard the folder's other names; put the folder itself there/,
      );
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(readdirSync(elsewhere)).toEqual([]);
      expect(readdirSync(join(root, 'linked'))).toEqual(['pg']);

      // PostgreSQL's folders without PG_VERSION: an initdb in place cut off, or a damaged database.
      const cut = join(root, 'cut', 'pg');
      mkdirSync(join(cut, 'base'), { recursive: true });
      mkdirSync(join(cut, 'global'));
      await expect(openPglite(cut, own)).rejects.toThrow(
        /: it holds PostgreSQL's folders but no PG_VERSION \(a first start cut off, or a damaged database\); empty it if it was never used, or restore PG_VERSION or a backup if it was$/,
      );
      expect(readdirSync(cut).sort()).toEqual(['base', 'global']);
    },
  );

  it('removes an initdb folder a killed process left beside, on a copy too', async () => {
    const parent = join(dir.path, 'leftover');
    mkdirSync(join(parent, 'pg.initdb-999999', 'base'), { recursive: true });
    const db = await openPglite(join(parent, 'pg'), { template });
    await db.close();
    expect(readdirSync(parent)).toEqual(['pg']);
  }, 60_000);

  it('without one, the first open runs initdb', async () => {
    const db = await openPglite(join(dir.path, 'initdb', 'pg'), { template: null });
    await migrate(db);
    expect((await db.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
    await db.close();
  }, 120_000);
});

/** A template folder with the database's files but no marker: its making was cut off. */
function half(root: string): string {
  const path = join(root, 'half');
  mkdirSync(path, { recursive: true });
  writeFileSync(join(path, 'PG_VERSION'), '17\n');
  return path;
}

function otherVersion(root: string, template: string): string {
  const path = join(root, 'other');
  copyTemplate(template, path);
  writeFileSync(join(path, 'steward-template'), '0.0.1\n');
  return path;
}
