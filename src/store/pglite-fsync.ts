import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
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

type Write = (
  stream: NodefsStream,
  buffer: Uint8Array,
  offset: number,
  length: number,
  position?: number,
) => number;
interface NodefsModule {
  NODEFS: { stream_ops: { fsync?: (stream: NodefsStream) => void; write: Write } };
}
interface NodefsStream {
  nfd: number;
  path?: string;
  node?: { mode: number };
}

/** Where PGlite mounts the data folder inside its file system. */
const PGDATA = '/pglite/data';
const isFolder = (stream: NodefsStream) => ((stream.node?.mode ?? 0) & 0o170000) === 0o040000;
/** Files whose failed write PostgreSQL answers with PANIC: the WAL, pg_control, pg_logical's. */
const PANIC_ON_WRITE = [`${PGDATA}/pg_wal/`, `${PGDATA}/global/pg_control`, `${PGDATA}/pg_logical/`];
const panicsOnWrite = (path: string | undefined) =>
  path !== undefined && PANIC_ON_WRITE.some((prefix) => path.startsWith(prefix));

/** What could not be done to a database file: flushing it, or writing the WAL. */
export type DiskFailure = 'flush' | 'write';

/**
 * What a failed fsync, or a failed WAL write (a full disk), does by default: says so in one line
 * and ends the process. PostgreSQL itself would PANIC and restart from its WAL; inside PGlite a
 * PANIC is swallowed and the database runs on half-written, its locks still held. A restart
 * recovers from the WAL.
 */
export function fsyncFailed(error: Error, path: string, what: DiskFailure = 'flush'): never {
  const verb = what === 'flush' ? `flush ${path} to disk` : `write ${path}`;
  // Written at once: the process ends on the next line.
  writeSync(
    2,
    `steward: database: could not ${verb} (${error.message}); stopping so that nothing half-written is used. Start steward again once the disk is fixed: the database recovers what was committed.\n`,
  );
  process.exit(1);
}

/** NODEFS on `dataDir`, with fsync that reaches the disk. */
export class FsyncNodeFS extends NodeFS {
  readonly #onFailure: (error: Error, path: string, what: DiskFailure) => never;
  readonly #dataDir: string;

  constructor(dataDir: string, onFailure: (error: Error, path: string, what: DiskFailure) => never) {
    super(dataDir);
    this.#dataDir = dataDir;
    this.#onFailure = onFailure;
  }

  override async init(...args: Parameters<NodeFS['init']>): ReturnType<NodeFS['init']> {
    const { emscriptenOpts } = await super.init(...args);
    const hostPath = (stream: NodefsStream) => {
      const path = stream.path ?? PGDATA;
      return path.startsWith(PGDATA) ? resolve(this.#dataDir) + path.slice(PGDATA.length) : path;
    };
    const giveFsync = (mod: NodefsModule) => {
      const ops = mod.NODEFS.stream_ops;
      ops.fsync = (stream) => {
        try {
          fs.fsyncSync(stream.nfd);
        } catch (error) {
          // As PostgreSQL does: a folder that cannot be flushed this way is no error.
          const code = (error as NodeJS.ErrnoException).code;
          if (isFolder(stream) && (code === 'EINVAL' || code === 'EBADF')) return;
          this.#onFailure(error as Error, hostPath(stream), 'flush');
          throw error;
        }
      };
      // A failed write of these is a PANIC too (a data file's is an ordinary error). NODEFS's
      // own write is this call, with the Node error turned into an errno.
      const write = ops.write;
      ops.write = (stream, buffer, offset, length, position) => {
        if (!panicsOnWrite(stream.path)) return write(stream, buffer, offset, length, position);
        try {
          return fs.writeSync(stream.nfd, buffer, offset, length, position);
        } catch (error) {
          this.#onFailure(error as Error, hostPath(stream), 'write');
          throw error;
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
