// The embedded database's lock names its holder by pid, start time, boot and PID namespace, and
// its holder touches it: a lock left by a killed steward never keeps the next one out, even with
// the same pid (a container's process 1), and a live holder always does, even one in another
// container whose pid means nothing here.
import { spawn } from 'node:child_process';
import { readFileSync, readlinkSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EMBEDDED_DB_LOCK } from '../src/limits.ts';
import { type LockHolder, lockVerdict, parseLock, parseStat, takeLock } from '../src/store/pglite-lock.ts';
import { tempDir } from './support/services.ts';

const me: LockHolder = { pid: 1, start: '500', boot: 'boot-a', pidns: 'pid:[1]' };
const here = { boot: 'boot-a', pidns: 'pid:[1]' };
const running = (starts: Record<number, string>) => (pid: number) =>
  pid in starts ? { alive: true, start: starts[pid] } : { alive: false };
const OLD = EMBEDDED_DB_LOCK.staleMs + 1;

describe('lockVerdict', () => {
  type Case = [
    string,
    LockHolder | undefined,
    ReturnType<typeof running>,
    number,
    'held' | 'stale' | 'fresh',
  ];
  const cases: Case[] = [
    ['this process, the same start: a second open in one process', me, running({ 1: '500' }), 0, 'held'],
    [
      'the same pid started earlier: a killed steward, same namespace',
      { ...me, start: '120' },
      running({ 1: '500' }),
      0,
      'stale',
    ],
    [
      'another live process that started then',
      { pid: 42, start: '90', ...here },
      running({ 1: '500', 42: '90' }),
      OLD,
      'held',
    ],
    [
      'another pid, now a newer process',
      { pid: 42, start: '90', ...here },
      running({ 42: '7000' }),
      0,
      'stale',
    ],
    ['a pid no longer running', { pid: 42, start: '90', ...here }, running({}), 0, 'stale'],
    [
      'another live pid whose start cannot be read',
      { pid: 42, start: '90', ...here },
      (pid: number) => ({ alive: pid === 42 }),
      0,
      'held',
    ],
    [
      'another PID namespace, touched just now: a live steward in another container',
      { pid: 1, start: '7', boot: 'boot-a', pidns: 'pid:[2]' },
      running({ 1: '500' }),
      1000,
      'fresh',
    ],
    [
      'another PID namespace, untouched for long: a killed container',
      { pid: 1, start: '7', boot: 'boot-a', pidns: 'pid:[2]' },
      running({ 1: '500' }),
      OLD,
      'stale',
    ],
    [
      'another boot, touched just now (a sandbox with its own boot id)',
      { pid: 42, start: '90', boot: 'boot-z', pidns: 'pid:[1]' },
      running({ 42: '90' }),
      1000,
      'fresh',
    ],
    [
      'another boot, untouched since',
      { pid: 42, start: '90', boot: 'boot-z', pidns: 'pid:[1]' },
      running({ 42: '90' }),
      OLD,
      'stale',
    ],
    ['an older steward (pid only) with this pid', { pid: 1 }, running({ 1: '500' }), 0, 'stale'],
    ['an older steward (pid only), alive', { pid: 42 }, running({ 1: '500', 42: '90' }), OLD, 'held'],
    ['an older steward (pid only), gone', { pid: 42 }, running({ 1: '500' }), 0, 'stale'],
    ['no holder (an unreadable lock)', undefined, running({ 1: '500' }), 0, 'stale'],
  ];
  it.each(cases)('%s', (_name, holder, probe, ageMs, verdict) => {
    expect(lockVerdict(holder, me, probe, ageMs)).toBe(verdict);
  });

  it('without /proc (not Linux), a live pid holds it, this one too', () => {
    const plain = { pid: 1 };
    expect(lockVerdict({ pid: 1 }, plain, () => ({ alive: true }), OLD)).toBe('held');
    expect(lockVerdict({ pid: 9 }, plain, () => ({ alive: false }), 0)).toBe('stale');
  });
});

describe('parseLock and parseStat', () => {
  it.each([
    ['1234', { pid: 1234 }],
    [
      '1234 98765 0f7c-boot pid:[4026531836]\n',
      { pid: 1234, start: '98765', boot: '0f7c-boot', pidns: 'pid:[4026531836]' },
    ],
    ['', undefined],
    ['not a pid', undefined],
    ['-3 1 b', undefined],
  ])('lock %j', (text, holder) => {
    expect(parseLock(text)).toEqual(holder);
  });

  const tail = (state: string) =>
    `${state} 1 7 7 0 -1 4194560 100 0 0 0 5 2 0 0 20 0 1 0 98765 1000 10 18446744073709551615`;
  it.each([
    ['a plain name', `77 (node) ${tail('S')}`, { start: '98765', zombie: false }],
    ['a name with spaces and parentheses', `77 (a) b (c) ${tail('R')}`, { start: '98765', zombie: false }],
    ['a zombie', `77 (sleep) ${tail('Z')}`, { start: '98765', zombie: true }],
  ])('stat: %s', (_name, stat, parsed) => {
    expect(parseStat(stat)).toEqual(parsed);
  });
});

describe.runIf(process.platform === 'linux')('takeLock', () => {
  const boot = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  const pidns = () => readlinkSync('/proc/self/ns/pid');

  it("takes over a lock naming this pid from an earlier start, and refuses this process's own", async () => {
    const dir = tempDir('steward-lock-');
    try {
      const lock = join(dir.path, 'pg.lock');
      writeFileSync(lock, `${process.pid} 1 ${boot()} ${pidns()}`);
      const release = await takeLock(lock, dir.path);
      const [pid, start] = readFileSync(lock, 'utf8').split(' ');
      expect(Number(pid)).toBe(process.pid);
      expect(start).not.toBe('1');
      await expect(takeLock(lock, dir.path)).rejects.toThrow(`in use by process ${process.pid}`);
      release();
      await (await takeLock(lock, dir.path))();
    } finally {
      dir.remove();
    }
  });

  it('refuses a lock a live process holds', async () => {
    const dir = tempDir('steward-lock-');
    const child = spawn('sleep', ['30']);
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      const lock = join(dir.path, 'pg.lock');
      const { start } = parseStat(readFileSync(`/proc/${child.pid}/stat`, 'utf8'));
      writeFileSync(lock, `${child.pid} ${start} ${boot()} ${pidns()}`);
      await expect(takeLock(lock, dir.path)).rejects.toThrow(`in use by process ${child.pid}`);
    } finally {
      child.kill();
      dir.remove();
    }
  });

  const quick = { heartbeatMs: 50, staleMs: 400 };

  it('waits out a lock from another namespace that is no longer touched, and refuses one that is', async () => {
    const dir = tempDir('steward-lock-');
    try {
      const lock = join(dir.path, 'pg.lock');
      const other = `1 7 ${boot()} pid:[999]`;
      // Last touched just under the stale age ago: the open waits a moment, then takes it.
      writeFileSync(lock, other);
      const almost = new Date(Date.now() - quick.staleMs + 200);
      utimesSync(lock, almost, almost);
      const started = Date.now();
      (await takeLock(lock, dir.path, { timing: quick }))();
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      // Touched while this open waits: a live holder in another container.
      writeFileSync(lock, other);
      const toucher = setInterval(() => utimesSync(lock, new Date(), new Date()), 20);
      try {
        await expect(takeLock(lock, dir.path, { timing: quick })).rejects.toThrow(
          'in use by a steward in another container or boot',
        );
      } finally {
        clearInterval(toucher);
      }
    } finally {
      dir.remove();
    }
  });

  it("a dead holder's lock touched in the future (a clock set back) is waited out by this process's clock", async () => {
    const dir = tempDir('steward-lock-');
    try {
      const lock = join(dir.path, 'pg.lock');
      writeFileSync(lock, `1 7 ${boot()} pid:[999]`);
      const inAnHour = new Date(Date.now() + 3_600_000);
      utimesSync(lock, inAnHour, inAnHour);
      const started = performance.now();
      (await takeLock(lock, dir.path, { timing: quick }))();
      expect(performance.now() - started).toBeGreaterThanOrEqual(quick.staleMs - 50);
    } finally {
      dir.remove();
    }
  });

  it('the holder touches its lock, puts it back if deleted, and stops when another takes it', async () => {
    const dir = tempDir('steward-lock-');
    try {
      const lock = join(dir.path, 'pg.lock');
      const lost: string[] = [];
      const release = await takeLock(lock, dir.path, { timing: quick, lost: (path) => lost.push(path) });
      const mine = readFileSync(lock, 'utf8');
      const past = new Date(Date.now() - 10_000);
      utimesSync(lock, past, past);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(Date.now() - statSync(lock).mtimeMs).toBeLessThan(5_000);
      rmSync(lock);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(readFileSync(lock, 'utf8')).toBe(mine);
      expect(lost).toEqual([]);
      writeFileSync(lock, `1 7 ${boot()} pid:[999]`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(lost).toEqual([lock]);
      // Its release leaves the other's lock alone.
      release();
      expect(readFileSync(lock, 'utf8')).toBe(`1 7 ${boot()} pid:[999]`);
    } finally {
      dir.remove();
    }
  });
});
