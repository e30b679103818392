// The embedded database's lock names its holder by pid, start time and boot, so a lock left by a
// killed steward never keeps the next one out, even with the same pid (a container's process 1),
// and a live holder always does.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type LockHolder, lockVerdict, parseLock, takeLock } from '../src/store/pglite-lock.ts';
import { tempDir } from './support/services.ts';

const me: LockHolder = { pid: 1, start: '500', boot: 'boot-a' };
const running = (starts: Record<number, string>) => (pid: number) =>
  pid in starts ? { alive: true, start: starts[pid] } : { alive: false };

describe('lockVerdict', () => {
  const cases: Array<[string, LockHolder | undefined, ReturnType<typeof running>, 'held' | 'stale']> = [
    ['this process, the same start: a second open in one process', me, running({ 1: '500' }), 'held'],
    [
      'the same pid started earlier: a killed steward in a container',
      { ...me, start: '120' },
      running({ 1: '500' }),
      'stale',
    ],
    ['the same pid without a start time: an older steward', { pid: 1 }, running({ 1: '500' }), 'stale'],
    [
      'another live process that started then',
      { pid: 42, start: '90', boot: 'boot-a' },
      running({ 1: '500', 42: '90' }),
      'held',
    ],
    [
      'another pid, now a newer process',
      { pid: 42, start: '90', boot: 'boot-a' },
      running({ 1: '500', 42: '7000' }),
      'stale',
    ],
    ['a pid no longer running', { pid: 42, start: '90', boot: 'boot-a' }, running({ 1: '500' }), 'stale'],
    [
      'a lock from before a reboot',
      { pid: 42, start: '90', boot: 'boot-z' },
      running({ 1: '500', 42: '90' }),
      'stale',
    ],
    [
      'another live pid, no start time (an older steward)',
      { pid: 42 },
      running({ 1: '500', 42: '90' }),
      'held',
    ],
    [
      'another live pid whose start cannot be read',
      { pid: 42, start: '90' },
      (pid: number) => ({ alive: pid === 42 }),
      'held',
    ],
    ['no holder (an unreadable lock)', undefined, running({ 1: '500' }), 'stale'],
  ];
  it.each(cases)('%s', (_name, holder, probe, verdict) => {
    expect(lockVerdict(holder, me, probe)).toBe(verdict);
  });

  it('without start times (not Linux), a live pid holds it, this one too', () => {
    const plain = { pid: 1 };
    expect(lockVerdict({ pid: 1 }, plain, () => ({ alive: true }))).toBe('held');
    expect(lockVerdict({ pid: 9 }, plain, () => ({ alive: false }))).toBe('stale');
  });
});

describe('parseLock', () => {
  it.each([
    ['1234', { pid: 1234 }],
    ['1234 98765 0f7c-boot\n', { pid: 1234, start: '98765', boot: '0f7c-boot' }],
    ['', undefined],
    ['not a pid', undefined],
    ['-3 1 b', undefined],
  ])('%j', (text, holder) => {
    expect(parseLock(text)).toEqual(holder);
  });
});

describe.runIf(process.platform === 'linux')('takeLock', () => {
  it("takes over a lock naming this pid from an earlier start, and refuses this process's own", () => {
    const dir = tempDir('steward-lock-');
    try {
      const lock = join(dir.path, 'pg.lock');
      writeFileSync(
        lock,
        `${process.pid} 1 ${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()}`,
      );
      const release = takeLock(lock, dir.path);
      const [pid, start] = readFileSync(lock, 'utf8').split(' ');
      expect(Number(pid)).toBe(process.pid);
      expect(start).not.toBe('1');
      expect(() => takeLock(lock, dir.path)).toThrow(`in use by process ${process.pid}`);
      release();
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
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      writeFileSync(lock, `${child.pid} ${start}`);
      expect(() => takeLock(lock, dir.path)).toThrow(`in use by process ${child.pid}`);
    } finally {
      child.kill();
      dir.remove();
    }
  });
});
