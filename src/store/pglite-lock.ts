import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { StoreError } from '../errors.ts';

// PGlite is one process's database: a second process opening the same folder would corrupt it.
// A lock file makes the second one stop with a clear message instead. A pid alone is not enough
// to name its holder: in a container steward is always process 1, so after a kill or a power cut
// the lock names a live process (the new steward itself) and no start would get past it; after a
// reboot any process may have the old pid. On Linux the lock also holds the holder's start time
// and the boot it started in, and a lock whose pid now runs another process is stale.

/** Who holds (or would hold) the lock. `start` and `boot` are known on Linux only. */
export interface LockHolder {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/PID/stat, field 22). */
  start?: string;
  /** /proc/sys/kernel/random/boot_id. */
  boot?: string;
}

export type LockVerdict = 'held' | 'stale';

/** What the system says of a pid now: whether it runs, and when the process running it started. */
export type ProcessProbe = (pid: number) => { alive: boolean; start?: string };

/** Whether the lock's holder is still the process that wrote it. Pure: table-tested. */
export function lockVerdict(
  holder: LockHolder | undefined,
  me: LockHolder,
  probe: ProcessProbe,
): LockVerdict {
  if (!holder) return 'stale';
  if (holder.boot && me.boot && holder.boot !== me.boot) return 'stale';
  // This process writes its start time where it can read it: a lock without one, naming this
  // pid, was written by an earlier process that had it.
  if (holder.pid === me.pid && me.start && !holder.start) return 'stale';
  const now = probe(holder.pid);
  if (!now.alive) return 'stale';
  if (holder.start && now.start && holder.start !== now.start) return 'stale';
  return 'held';
}

export function parseLock(text: string): LockHolder | undefined {
  const [pid, start, boot] = text.trim().split(/\s+/);
  const n = Number(pid);
  if (!Number.isInteger(n) || n <= 0) return undefined;
  return { pid: n, ...(start ? { start } : {}), ...(boot ? { boot } : {}) };
}

const formatLock = (h: LockHolder) => [h.pid, h.start, h.boot].filter((v) => v !== undefined).join(' ');

function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses; the fields after the last ')' do not.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

const systemProbe: ProcessProbe = (pid) => {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return { alive: false };
  }
  const start = startTimeOf(pid);
  return { alive: true, ...(start ? { start } : {}) };
};

/** Takes the lock at `lockPath` for the database at `dir`; returns its release. */
export function takeLock(lockPath: string, dir: string, probe: ProcessProbe = systemProbe): () => void {
  const start = startTimeOf(process.pid);
  const boot = bootId();
  const me: LockHolder = { pid: process.pid, ...(start ? { start } : {}), ...(boot ? { boot } : {}) };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, formatLock(me));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new StoreError(`database: cannot lock ${dir}: ${(error as Error).message}`);
      }
      const holder = parseLock(readFileSync(lockPath, 'utf8'));
      if (holder && lockVerdict(holder, me, probe) === 'held') {
        throw new StoreError(
          `database: the embedded database at ${dir} is in use by process ${holder.pid}; stop that steward first, or set STEWARD_DATABASE_URL to share one PostgreSQL`,
        );
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new StoreError(`database: cannot lock ${dir}; remove ${lockPath} if no steward is running`);
}
