import { randomUUID } from 'node:crypto';
import {
  linkSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { StoreError } from '../errors.ts';
import { EMBEDDED_DB_LOCK } from '../limits.ts';

// PGlite is one process's database: a second process opening the same folder would corrupt it.
// A lock file makes the second one stop with a clear message instead. A pid alone does not name
// its holder: in a container steward is always process 1, so after a kill the lock named a live
// process (the new steward itself) and no start got past it, and a pid seen from another PID
// namespace (`docker compose run steward doctor` beside the running one) or another boot is
// someone else's. So the lock holds the holder's pid, start time, boot and PID namespace, and the
// holder touches it every few seconds: where the holder's pid can be seen (same namespace and
// boot) it is checked exactly; elsewhere a lock touched recently is held.

/** Who holds (or would hold) the lock. `start`, `boot` and `pidns` are known on Linux only. */
export interface LockHolder {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/PID/stat, field 22). */
  start?: string;
  /** /proc/sys/kernel/random/boot_id. */
  boot?: string;
  /** The PID namespace, as /proc/self/ns/pid names it. */
  pidns?: string;
}

/** `fresh`: held by a process this one cannot see, which touched the lock `ageMs` ago. */
export type LockVerdict = 'held' | 'stale' | 'fresh';

/** What the system says of a pid now: whether it runs, and when the process running it started. */
export type ProcessProbe = (pid: number) => { alive: boolean; start?: string };

/** Whether the lock's holder is still the process that wrote it. Pure: table-tested. */
export function lockVerdict(
  holder: LockHolder | undefined,
  me: LockHolder,
  probe: ProcessProbe,
  ageMs: number,
  staleMs: number = EMBEDDED_DB_LOCK.staleMs,
): LockVerdict {
  if (!holder) return 'stale';
  // An older steward wrote only its pid: this pid's, that was an earlier process (a container's 1).
  if (!holder.pidns && me.pidns) {
    if (holder.pid === me.pid) return 'stale';
    return probe(holder.pid).alive ? 'held' : 'stale';
  }
  const visible = holder.pidns === me.pidns && holder.boot === me.boot;
  if (!visible) return ageMs < staleMs ? 'fresh' : 'stale';
  const now = probe(holder.pid);
  if (!now.alive) return 'stale';
  if (holder.start && now.start && holder.start !== now.start) return 'stale';
  return 'held';
}

export function parseLock(text: string): LockHolder | undefined {
  const [pid, start, boot, pidns] = text.trim().split(/\s+/);
  const n = Number(pid);
  if (!Number.isInteger(n) || n <= 0) return undefined;
  return { pid: n, ...(start ? { start } : {}), ...(boot ? { boot } : {}), ...(pidns ? { pidns } : {}) };
}

/** Field 22 of /proc/PID/stat, and whether the process is a zombie (field 3). Pure. */
export function parseStat(stat: string): { start?: string; zombie: boolean } {
  // The command name may hold spaces and parentheses; the fields after the last ')' do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = fields[19];
  return { zombie: fields[0] === 'Z', ...(start ? { start } : {}) };
}

const readOr = (read: () => string): string | undefined => {
  try {
    return read().trim() || undefined;
  } catch {
    return undefined;
  }
};

function whoAmI(): LockHolder {
  const start = readOr(() => readFileSync('/proc/self/stat', 'utf8'));
  const boot = readOr(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'));
  const pidns = readOr(() => readlinkSync('/proc/self/ns/pid'));
  const started = start ? parseStat(start).start : undefined;
  return {
    pid: process.pid,
    ...(started ? { start: started } : {}),
    ...(boot ? { boot } : {}),
    ...(pidns ? { pidns } : {}),
  };
}

const systemProbe: ProcessProbe = (pid) => {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return { alive: false };
  }
  const stat = readOr(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  if (!stat) return { alive: true };
  const { start, zombie } = parseStat(stat);
  return zombie ? { alive: false } : { alive: true, ...(start ? { start } : {}) };
};

const format = (h: LockHolder) => [h.pid, h.start, h.boot, h.pidns].filter((v) => v !== undefined).join(' ');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The lock's text and when it was last touched, or undefined when there is none. */
function readLock(lockPath: string): { text: string; touchedMs: number } | undefined {
  try {
    return { text: readFileSync(lockPath, 'utf8'), touchedMs: statSync(lockPath).mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Creates the lock whole, or answers false when one is there (written elsewhere, then linked). */
function publish(lockPath: string, text: string): boolean {
  // Unique: in every container steward is process 1.
  const temp = `${lockPath}.${randomUUID()}.new`;
  writeFileSync(temp, text, { flag: 'wx' });
  try {
    linkSync(temp, lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

const inUse = (dir: string, lockPath: string, who: string) =>
  new StoreError(
    `database: the embedded database at ${dir} is in use by ${who}; stop that steward first, or set STEWARD_DATABASE_URL to share one PostgreSQL (its lock: ${lockPath})`,
  );

/** How the lock is kept: the holder's touch, and how long an untouched foreign lock lives. */
export interface LockTiming {
  heartbeatMs: number;
  staleMs: number;
}

/** Told that the lock was taken from this process (then it must stop writing at once). */
export type LockLost = (lockPath: string) => void;

/**
 * Takes the lock at `lockPath` for the database at `dir`; resolves to its release. A lock held
 * by a process in another PID namespace or boot is waited for while it may still be touched: a
 * container restarted after a kill starts once the old lock is stale; a live holder touches it,
 * and this open is then refused.
 */
export async function takeLock(
  lockPath: string,
  dir: string,
  options: { timing?: LockTiming; lost?: LockLost } = {},
): Promise<() => void> {
  const timing = options.timing ?? EMBEDDED_DB_LOCK;
  try {
    const mine = await contend(lockPath, dir, timing);
    return holdLock(lockPath, mine, timing.heartbeatMs, options.lost ?? lockLost);
  } catch (error) {
    if (error instanceof StoreError) throw error;
    throw new StoreError(`database: cannot lock ${dir}: ${(error as Error).message}`);
  }
}

async function contend(lockPath: string, dir: string, timing: LockTiming) {
  const me = whoAmI();
  const mine = format(me);
  // A foreign lock is judged by its age, and by how long it stays untouched under this process's
  // own clock: a wall clock set back (a Raspberry Pi after a power cut) cannot keep it fresh.
  let first: { text: string; touchedMs: number; seenAt: number } | undefined;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (publish(lockPath, mine)) return mine;
    const found = readLock(lockPath);
    if (!found) continue;
    const holder = parseLock(found.text);
    const ageMs = Date.now() - found.touchedMs;
    let verdict = lockVerdict(holder, me, systemProbe, ageMs, timing.staleMs);
    if (verdict === 'held') throw inUse(dir, lockPath, `process ${holder?.pid}`);
    if (verdict === 'fresh' && first) {
      // Touched (or replaced) since the first look: its holder lives.
      if (first.text !== found.text || found.touchedMs !== first.touchedMs)
        throw inUse(dir, lockPath, 'a steward in another container or boot');
      if (performance.now() - first.seenAt >= timing.staleMs) verdict = 'stale';
    }
    if (verdict === 'fresh') {
      first ??= { ...found, seenAt: performance.now() };
      const untouched = Math.max(ageMs, performance.now() - first.seenAt);
      await sleep(Math.max(50, Math.min(timing.heartbeatMs + 500, timing.staleMs - untouched + 50)));
      continue;
    }
    // Stale: removed only if it is still the lock that was judged (another opener may have won;
    // the moment between the two is closed by the holder checking its lock at each touch).
    if (readLock(lockPath)?.text === found.text) rmSync(lockPath, { force: true });
  }
  throw new StoreError(`database: cannot lock ${dir}; remove ${lockPath} if no steward is running`);
}

/** What losing the lock does by default: one line, and the process ends before it writes more. */
function lockLost(lockPath: string): never {
  writeSync(
    2,
    `steward: database: another process took the embedded database's lock (${lockPath}); stopping so that two never write it. Stop the other one, then start steward again.\n`,
  );
  process.exit(1);
}

/**
 * Touches the lock while it is held, so that who cannot see this process knows it lives, and
 * checks it is still this process's: one that lost it stops.
 */
function holdLock(lockPath: string, mine: string, heartbeatMs: number, lost: LockLost): () => void {
  const touch = setInterval(() => {
    try {
      const found = readLock(lockPath);
      if (found?.text === mine) {
        const now = new Date();
        utimesSync(lockPath, now, now);
        return;
      }
      // Deleted under this process: put back, unless another has published its own meanwhile.
      if (!found && publish(lockPath, mine)) return;
    } catch {
      // The folder unreadable or gone for now: judged again at the next touch.
      return;
    }
    clearInterval(touch);
    lost(lockPath);
  }, heartbeatMs);
  touch.unref();
  return () => {
    clearInterval(touch);
    if (readLock(lockPath)?.text === mine) rmSync(lockPath, { force: true });
  };
}
