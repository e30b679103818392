import { createRequire } from 'node:module';
import { NodeFS } from '@electric-sql/pglite/nodefs';

// PGlite runs PostgreSQL with fsync off, and its Node file system (Emscripten's NODEFS) has no
// fsync to call: a commit reaches the operating system's page cache, and the disk whenever the
// kernel writes it back, in no promised order. That survives steward being killed, not a power cut
// or a kernel crash, after which the last turns can be gone or the database torn. This file system
// gives NODEFS the fsync it lacks; with EMBEDDED_DB_SETTINGS (fsync on, wal_sync_method fsync,
// since PGlite's fdatasync does nothing), PostgreSQL flushes the WAL at each commit and the data
// files at each checkpoint (src/store/pglite-checkpoints.ts, and the close), as on a server.

/** The `fs` module NODEFS calls: `require`'s, so a test can count what reaches the disk. */
const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

interface NodefsModule {
  NODEFS: { stream_ops: { fsync?: (stream: { nfd: number; path?: string }) => void } };
}

/**
 * What a failed fsync does by default: says so in one line and ends the process. PostgreSQL
 * itself would PANIC and restart from its WAL; inside PGlite a PANIC is swallowed and the
 * database runs on half-written, its locks still held. A restart recovers from the WAL.
 */
export function fsyncFailed(error: Error, path: string): never {
  process.stderr.write(
    `steward: database: could not flush ${path} to disk (${error.message}); stopping so that nothing half-written is used. Start steward again once the disk is fixed: the database recovers what was committed.\n`,
  );
  process.exit(1);
}

/** NODEFS on `dataDir`, with fsync that reaches the disk. */
export class FsyncNodeFS extends NodeFS {
  readonly #onFailure: (error: Error, path: string) => never;

  constructor(dataDir: string, onFailure: (error: Error, path: string) => never) {
    super(dataDir);
    this.#onFailure = onFailure;
  }

  override async init(...args: Parameters<NodeFS['init']>): ReturnType<NodeFS['init']> {
    const { emscriptenOpts } = await super.init(...args);
    const giveFsync = (mod: NodefsModule) => {
      mod.NODEFS.stream_ops.fsync = (stream) => {
        try {
          fs.fsyncSync(stream.nfd);
        } catch (error) {
          this.#onFailure(error as Error, stream.path ?? 'a database file');
        }
      };
    };
    return {
      emscriptenOpts: {
        ...emscriptenOpts,
        preRun: [...(emscriptenOpts.preRun ?? []), giveFsync as (mod: unknown) => void],
      },
    };
  }
}
