// A steward process for the channel bench, and what Linux says about its memory and CPU.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const MIB = 1024;
/** Kernel clock ticks per second (USER_HZ), the unit of utime/stime in /proc/PID/stat. */
const TICKS_PER_S = 100;

export interface StewardProcess {
  child: ChildProcess;
  pid: number;
  /** performance.now() at spawn. */
  startedAt: number;
  /** Everything it wrote to stderr (its log), for a failure message. */
  stderr(): string;
  /** SIGTERM, then waits for the exit (SIGKILL after 15 s). */
  stop(): Promise<number | null>;
}

/**
 * Only `env`, plus HOME and a PATH that finds this Node first. steward is launched as a user's
 * `npx steward` launches it: the bin file as a program, so its launcher line picks the Node flags.
 */
function launchEnv(env: Record<string, string>): Record<string, string> {
  const path = [dirname(process.execPath), process.env.PATH].filter(Boolean).join(':');
  return { PATH: path, HOME: process.env.HOME ?? '/tmp', ...env };
}

/** Runs `steward ARGS` from `tree` on this Node. */
export function spawnSteward(
  tree: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
): StewardProcess {
  const child = spawn(join(tree, 'bin/steward.js'), args, {
    cwd,
    env: launchEnv(env),
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => {
    stderr = (stderr + c).slice(-20_000);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  if (child.pid === undefined) throw new Error('steward did not start');
  return {
    child,
    pid: child.pid,
    startedAt: performance.now(),
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

function statusField(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  if (!line) throw new Error(`no ${field} for process ${pid}`);
  return Number(line.split(/\s+/)[1]) / MIB;
}

/** Resident memory now, in MiB. */
export const rssMib = (pid: number) => statusField(pid, 'VmRSS');

/** CPU seconds (user + system, all threads) used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces; the fields after it are plain numbers.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

/** Samples RSS every `everyMs` until stopped; returns the peak seen. */
export function rssSampler(pid: number, everyMs = 20) {
  let peak = rssMib(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMib(pid));
    } catch {
      // The process ended; the peak so far stands.
    }
  }, everyMs);
  return {
    stop(): number {
      clearInterval(timer);
      return peak;
    },
  };
}

/** Runs a short-lived steward command to its end and returns its peak RSS (MiB) and exit code. */
export async function peakOfCommand(
  tree: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  input: string,
): Promise<{ peakMib: number; code: number | null; seconds: number }> {
  const reporter = new URL('./report-peak.mjs', import.meta.url).pathname;
  const out = join(cwd, `peak-${process.pid}-${Math.random().toString(36).slice(2)}.txt`);
  const started = performance.now();
  const child = spawn(join(tree, 'bin/steward.js'), args, {
    cwd,
    env: launchEnv({ ...env, NODE_OPTIONS: `--import ${reporter}`, BENCH_PEAK_FILE: out }),
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  child.stdin.end(input);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  const seconds = (performance.now() - started) / 1000;
  let peakMib: number;
  try {
    peakMib = Number(readFileSync(out, 'utf8')) / MIB;
  } catch {
    throw new Error(`steward ${args.join(' ')} left no peak figure (exit ${code}): ${stderr.slice(-500)}`);
  }
  return { peakMib, code, seconds };
}
