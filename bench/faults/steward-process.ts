// A real `steward start` as an operator runs it, in a process group of its own so `kill -9` takes
// it (and any shell it started) down at once, at a moment the suite picks.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const BIN = resolve(import.meta.dirname, '../../bin/steward.js');

export interface StewardProcess {
  pid: number;
  /** Everything it wrote on stderr (its JSON log) so far, this run and earlier ones. */
  log(): string;
  /** Resolves once a log line matches. */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** SIGKILL to the whole process group; resolves once the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** Resident set size now, from /proc, in MiB. */
  rssMb(): number;
  exited(): boolean;
}

export function startSteward(env: Record<string, string>, logSoFar = ''): StewardProcess {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'start'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      // A profile of the stewards a scenario runs, e.g. FAULTS_NODE_OPTIONS=--cpu-prof.
      ...(process.env.FAULTS_NODE_OPTIONS ? { NODE_OPTIONS: process.env.FAULTS_NODE_OPTIONS } : {}),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let log = logSoFar;
  let gone = false;
  const exit = new Promise<void>((done) =>
    child.on('exit', () => {
      gone = true;
      done();
    }),
  );
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    log += chunk;
  });
  const pid = child.pid as number;
  return {
    pid,
    log: () => log,
    async waitForLog(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(log)) {
        if (gone) throw new Error(`steward exited before ${pattern}: ${log.slice(-2000)}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}: ${log.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async kill9() {
      if (gone) return;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await exit;
    },
    async stop() {
      if (gone) return;
      process.kill(-pid, 'SIGTERM');
      const timer = setTimeout(() => {
        if (!gone) process.kill(-pid, 'SIGKILL');
      }, 15_000);
      await exit;
      clearTimeout(timer);
    },
    rssMb() {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      return kb / 1024;
    },
    exited: () => gone,
  };
}
