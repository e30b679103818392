import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import { StoreError } from '../errors.ts';
import { EMBEDDED_DB_SETTINGS } from '../limits.ts';
import type { Db, Queryable } from './db.ts';
import { wrapErrors } from './db-errors.ts';
import { FsyncNodeFS } from './pglite-fsync.ts';
import { copyTemplate, defaultTemplatePath } from './pglite-template.ts';
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

/** PGlite on `dir` with steward's settings (it runs initdb when `dir` holds no database). */
export function createPglite(dir: string): Promise<PGlite> {
  baselineWasmOnly();
  return PGlite.create(dir, { fs: new FsyncNodeFS(dir), startParams: startParams() });
}

export interface PgliteOptions {
  /** The empty database a first open copies (src/store/pglite-template.ts); null runs initdb. */
  template?: string | null;
  /** Told why a template could not be copied (the open then runs initdb). */
  warn?: (line: string) => void;
}

export async function openPglite(dir: string, options: PgliteOptions = {}): Promise<Db> {
  mkdirSync(dirname(dir), { recursive: true });
  const release = takeLock(`${dir}.lock`, dir);
  const template = options.template === undefined ? defaultTemplatePath() : options.template;
  try {
    copyTemplate(template ?? undefined, dir);
  } catch (error) {
    // Only speed is lost: the copy never left anything in `dir`, and initdb makes the database.
    options.warn?.(
      `database: could not copy the empty database from ${template} (${(error as Error).message.replace(/\s+/g, ' ').trim()}); making it with initdb instead, which takes a few seconds`,
    );
  }
  mkdirSync(dir, { recursive: true });
  let pglite: PGlite;
  try {
    pglite = await createPglite(dir);
  } catch (error) {
    release();
    throw new StoreError(
      `database: cannot open the embedded database at ${dir}: ${(error as Error).message}`,
    );
  }
  const wrap = (client: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    query: async (sql, params) => wrapErrors(async () => client.query(sql, storableParams(params))),
    exec: async (sql) => {
      await wrapErrors(() => client.exec(sql));
    },
  });
  return {
    kind: 'pglite',
    location: dir,
    ...wrap(pglite),
    transaction: (work) => pglite.transaction((tx) => work(wrap(tx))),
    async close() {
      await pglite.close();
      release();
    },
  };
}

/**
 * PGlite is one process's database: a second process opening the same folder would corrupt it.
 * A pid file makes the second one stop with a clear message instead.
 */
function takeLock(lockPath: string, dir: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new StoreError(`database: cannot lock ${dir}: ${(error as Error).message}`);
      }
      const holder = Number(readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && processAlive(holder)) {
        throw new StoreError(
          `database: the embedded database at ${dir} is in use by process ${holder}; stop that steward first, or set STEWARD_DATABASE_URL to share one PostgreSQL`,
        );
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new StoreError(`database: cannot lock ${dir}; remove ${lockPath} if no steward is running`);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
