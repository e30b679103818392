import { existsSync, mkdirSync, readdirSync, readlinkSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import { StoreError } from '../errors.ts';
import { EMBEDDED_DB_CHECKPOINT_MS, EMBEDDED_DB_SETTINGS } from '../limits.ts';
import type { Db, Queryable } from './db.ts';
import { wrapErrors } from './db-errors.ts';
import { flushFolder, flushTree } from './flush.ts';
import { periodicCheckpoints } from './pglite-checkpoints.ts';
import { FsyncNodeFS, fsyncFailed } from './pglite-fsync.ts';
import { takeLock } from './pglite-lock.ts';
import { copyTemplate, defaultTemplatePath, lstatOrUndefined } from './pglite-template.ts';
import { storableParams } from './storable.ts';

/** PGlite's own start parameters, then ours (a later -c wins). */
const startParams = () => [
  ...PGlite.defaultStartParams,
  ...Object.entries(EMBEDDED_DB_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
];

/**
 * PGlite is PostgreSQL compiled to a 9 MB wasm module. V8's optimizing tier recompiles its hot
 * functions as it starts, which costs over 100 MiB of RSS that stays (and peaks far higher on a
 * first run); the baseline compiler alone (Liftoff) answers a single owner's queries about as fast.
 * Set before the module is compiled. It applies to the whole process: a Matrix steward's crypto
 * module (matrix-sdk-crypto-wasm) then runs on Liftoff too, its work per message being small.
 */
function baselineWasmOnly(): void {
  setFlagsFromString('--no-wasm-tier-up');
  setFlagsFromString('--no-wasm-dynamic-tiering');
}

/**
 * PGlite on `dir` with steward's settings (it runs initdb when `dir` holds no database). A write
 * that cannot be flushed to disk ends the process, as PostgreSQL's PANIC would (`fsyncFailed`).
 */
export function createPglite(dir: string, onFsyncFailure = fsyncFailed): Promise<PGlite> {
  baselineWasmOnly();
  return PGlite.create(dir, { fs: new FsyncNodeFS(dir, onFsyncFailure), startParams: startParams() });
}

export interface PgliteOptions {
  /** The empty database a first open copies (src/store/pglite-template.ts); null runs initdb. */
  template?: string | null;
  /** Told why a template could not be copied (the open then runs initdb), or a checkpoint failed. */
  warn?: (line: string) => void;
  /** How often a checkpoint is made while something is written. Default EMBEDDED_DB_CHECKPOINT_MS. */
  checkpointEveryMs?: number;
}

export async function openPglite(dir: string, options: PgliteOptions = {}): Promise<Db> {
  mkdirSync(dirname(dir), { recursive: true });
  const release = await takeLock(`${dir}.lock`, dir);
  let opened: PGlite;
  try {
    opened = await createInPlace(dir, options);
  } catch (error) {
    release();
    throw new StoreError(`database: cannot open the embedded database at ${dir}: ${reason(error)}`);
  }
  const wrap = (client: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    query: async (sql, params) => wrapErrors(async () => client.query(sql, storableParams(params))),
    exec: async (sql) => {
      await wrapErrors(() => client.exec(sql));
    },
  });
  const checkpoints = periodicCheckpoints(
    opened,
    options.checkpointEveryMs ?? EMBEDDED_DB_CHECKPOINT_MS,
    options.warn,
  );
  return {
    kind: 'pglite',
    location: dir,
    ...wrap(opened),
    transaction: (work) => opened.transaction((tx) => work(wrap(tx))),
    async close() {
      try {
        await checkpoints.stop();
        await opened.close();
      } finally {
        release();
      }
    },
  };
}

/** Why the open failed. PGlite's file system errors carry an Emscripten errno and no message. */
function reason(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  const errno = (error as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' ? `a file system call failed (Emscripten errno ${errno})` : String(error);
}

/** A new file system's own folder, found in a data folder that is a mount point: not the owner's. */
const LOST_FOUND = 'lost+found';

/** The database at `dir`, copied from the template or made by initdb when there is none yet. */
async function createInPlace(dir: string, options: PgliteOptions): Promise<PGlite> {
  refuseUnusable(dir);
  // Every later open: nothing to make, and nothing beside to tidy (each path that made `dir` did).
  if (existsSync(join(dir, 'PG_VERSION'))) return createPglite(dir);
  removeLeftovers(dir);
  const template = options.template === undefined ? defaultTemplatePath() : options.template;
  let copied = false;
  try {
    copied = copyTemplate(template ?? undefined, dir);
  } catch (error) {
    // Only speed is lost: the copy never left anything in `dir`, and initdb makes the database.
    options.warn?.(
      `database: could not copy the empty database from ${template} (${(error as Error).message.replace(/\s+/g, ' ').trim()}); making it with initdb instead, which takes a few seconds`,
    );
  }
  if (!copied) {
    if (existsSync(dir)) await initdbInPlace(dir);
    else await initdbBeside(dir);
  }
  return createPglite(dir);
}

/**
 * Refuses, before anything is written, a folder that cannot safely become or be the database: a
 * symbolic link (the lock beside it would not guard the folder's other names, and PGlite's file
 * system cannot open through one), and a folder holding files but no database, where initdb
 * would replace any of them that PostgreSQL also writes.
 */
function refuseUnusable(dir: string): void {
  if (lstatOrUndefined(dir)?.isSymbolicLink())
    throw new Error(
      `it is a symbolic link (to ${resolve(dirname(dir), readlinkSync(dir))}), and the lock beside it would not guard the folder's other names; put the folder itself there (mv it into place) or bind-mount it`,
    );
  if (existsSync(join(dir, 'PG_VERSION')) || !existsSync(dir)) return;
  const held = readdirSync(dir).filter((name) => name !== LOST_FOUND);
  if (held.length === 0) return;
  const listed = `${held.slice(0, 3).join(', ')}${held.length > 3 ? ', …' : ''}`;
  // PostgreSQL's own folders without PG_VERSION: an initdb in place (a mount point) was cut off.
  if (held.includes('global') && held.includes('base'))
    throw new Error(
      "it holds PostgreSQL's folders but no PG_VERSION (a first start cut off, or a damaged database); empty it if it was never used, or restore PG_VERSION or a backup if it was",
    );
  throw new Error(
    `it holds files but no database (no PG_VERSION: ${listed}); move them out of it, or use PostgreSQL with STEWARD_DATABASE_URL`,
  );
}

/** initdb folders that killed processes left beside `dir` (the caller holds the lock). */
function removeLeftovers(dir: string): void {
  for (const name of readdirSync(dirname(dir)))
    if (name.startsWith(`${basename(dir)}.initdb-`))
      rmSync(join(dirname(dir), name), { recursive: true, force: true });
}

/**
 * initdb writes PG_VERSION a moment before it ends, so one cut off in place by a kill or a power
 * cut leaves a folder the next open takes for a whole database. When `dir` does not exist yet (the
 * folder steward makes itself) initdb runs in one beside it, renamed into place once its files are
 * on disk, as a template copy is. Nothing is ever removed from `dir` itself.
 */
async function initdbBeside(dir: string): Promise<void> {
  const parent = dirname(dir);
  const building = `${dir}.initdb-${process.pid}`;
  mkdirSync(building, { mode: 0o700 });
  try {
    await initdbInPlace(building);
    renameSync(building, dir);
    flushFolder(parent);
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}

/**
 * initdb in a folder that exists (a mount point, a folder the owner made): it cannot be renamed
 * into place, so a cut-off initdb there is not covered.
 */
async function initdbInPlace(dir: string): Promise<void> {
  await (await createPglite(dir)).close();
  // initdb's files arrive by plain writes, and PostgreSQL, finding a cluster shut down cleanly,
  // flushes only what it changes later: they are flushed here, once closed, as a template copy is.
  flushTree(dir, [LOST_FOUND]);
  flushFolder(dirname(dir));
}
