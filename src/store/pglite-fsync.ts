import { createRequire } from 'node:module';
import { NodeFS } from '@electric-sql/pglite/nodefs';

// PGlite runs PostgreSQL with fsync off, and its Node file system (Emscripten's NODEFS) has no
// fsync to call: a commit reaches the operating system's page cache, never the disk. That survives
// steward being killed, not a power cut or a kernel crash, after which the last turns can be gone
// or the database unreadable. This file system gives NODEFS the fsync it lacks; with
// EMBEDDED_DB_SETTINGS (fsync on, wal_sync_method fsync, since PGlite's fdatasync does nothing),
// PostgreSQL then flushes the WAL at each commit and the data files at each checkpoint, as it does
// on a server.

/** The `fs` module NODEFS calls: `require`'s, so a test can count what reaches the disk. */
const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');

interface NodefsModule {
  NODEFS: {
    stream_ops: { fsync?: (stream: { nfd: number }) => void };
    tryFSOperation<T>(operation: () => T): T;
  };
}

/** NODEFS on `dataDir`, with fsync that reaches the disk. */
export class FsyncNodeFS extends NodeFS {
  override async init(...args: Parameters<NodeFS['init']>): ReturnType<NodeFS['init']> {
    const { emscriptenOpts } = await super.init(...args);
    const giveFsync = (mod: NodefsModule) => {
      // A failed fsync becomes the errno PostgreSQL expects (it then stops rather than lose data).
      mod.NODEFS.stream_ops.fsync = (stream) => mod.NODEFS.tryFSOperation(() => fs.fsyncSync(stream.nfd));
    };
    return {
      emscriptenOpts: {
        ...emscriptenOpts,
        preRun: [...(emscriptenOpts.preRun ?? []), giveFsync as (mod: unknown) => void],
      },
    };
  }
}
