import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Tool, ToolContext } from '../types.ts';
import { ToolInputError } from '../types.ts';

export type ShellArgs = {
  command: string;
  timeout_s?: number;
};

export interface ShellToolOptions {
  /** Bytes of combined stdout and stderr kept; the rest is counted and dropped. Default 10 MiB. */
  maxOutputBytes?: number;
  /** Time between SIGTERM and SIGKILL to the process group. Default 2000 ms. */
  killGraceMs?: number;
  /** Environment the allowlist is taken from. Default `process.env`. */
  baseEnv?: NodeJS.ProcessEnv;
}

export const SHELL_DEFAULT_TIMEOUT_S = 30;
export const SHELL_MAX_TIMEOUT_S = 120;
export const SHELL_DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024;
/** One argv element may not exceed 128 KiB on Linux; 30 000 characters stay under it in UTF-8. */
export const SHELL_MAX_COMMAND_LENGTH = 30_000;
const DEFAULT_KILL_GRACE_MS = 2_000;
const FALLBACK_PATH = '/usr/local/bin:/usr/bin:/bin';
const POLL_MS = 25;

/**
 * The environment a command sees: an allowlist, never a denylist, so no STEWARD_* variable, token or
 * key leaks by a name nobody thought of. HOME is the workspace.
 */
export function scrubbedEnv(base: NodeJS.ProcessEnv, workspace: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if (name === 'PATH' || name === 'LANG' || name === 'TERM' || name === 'TZ' || name.startsWith('LC_')) {
      env[name] = value;
    }
  }
  env.PATH ??= FALLBACK_PATH;
  env.HOME = workspace;
  return env;
}

function clampTimeout(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return SHELL_DEFAULT_TIMEOUT_S;
  return Math.min(SHELL_MAX_TIMEOUT_S, Math.max(1, Math.ceil(value)));
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Whether any member of the process group is still running. A zombie counts as gone: it holds no
 * pipes and runs no code, and where nothing reaps orphans (a container whose PID 1 is not an init)
 * it would otherwise look alive forever.
 */
async function groupAlive(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return true; // no procfs: trust kill(0)
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = await readFile(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
  }
  return false;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

async function waitFor(condition: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${n} bytes (${Math.round((n / 1024) * 10) / 10} KiB)`;
  return `${n} bytes (${Math.round((n / 1024 / 1024) * 10) / 10} MiB)`;
}

interface Captured {
  chunks: Buffer[];
  dropped: number;
}

function section(label: string, stream: Captured): string {
  const text = Buffer.concat(stream.chunks).toString('utf8');
  if (text === '' && stream.dropped === 0) return `--- ${label}: (empty) ---`;
  return `--- ${label} ---\n${text.endsWith('\n') ? text.slice(0, -1) : text}`;
}

export function createShellTool(options: ShellToolOptions = {}): Tool<ShellArgs> {
  const maxOutput = options.maxOutputBytes ?? SHELL_DEFAULT_MAX_OUTPUT_BYTES;
  const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;

  async function execute(args: ShellArgs, ctx: ToolContext): Promise<string> {
    const command = args.command;
    if (typeof command !== 'string' || command.trim() === '') {
      throw new ToolInputError('shell needs a non-empty "command", e.g. {"command": "ls -la"}.');
    }
    if (command.includes('\0')) {
      throw new ToolInputError(
        'The command contains a NUL character; remove it (the shell cannot pass one).',
      );
    }
    const timeoutS = clampTimeout(args.timeout_s);
    if (ctx.signal.aborted) return 'cancelled before the command started; nothing ran';

    const workspace = resolve(ctx.workspace);
    await mkdir(workspace, { recursive: true });

    // The command is one argv element of sh: nothing is interpolated, quoted or rebuilt here.
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: workspace,
      env: scrubbedEnv(options.baseEnv ?? process.env, workspace),
      detached: true, // setsid(): its own session and process group, so the whole group can be killed
      stdio: ['ignore', 'pipe', 'pipe'], // stdin is /dev/null
    });

    const out: Captured = { chunks: [], dropped: 0 };
    const err: Captured = { chunks: [], dropped: 0 };
    let kept = 0;
    const collect = (into: Captured) => (chunk: Buffer) => {
      const room = maxOutput - kept;
      if (chunk.length <= room) {
        into.chunks.push(chunk);
        kept += chunk.length;
        return;
      }
      if (room > 0) {
        into.chunks.push(chunk.subarray(0, room));
        kept += room;
      }
      into.dropped += chunk.length - Math.max(0, room);
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));

    let spawnError: Error | undefined;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
      child.once('exit', (code, signal) => done({ code, signal }));
      child.once('error', (error) => {
        spawnError = error;
        done({ code: null, signal: null });
      });
    });
    let isClosed = false;
    const closed = new Promise<void>((done) =>
      child.once('close', () => {
        isClosed = true;
        done();
      }),
    );

    const pgid = child.pid;
    let stopReason: 'timeout' | 'cancelled' | undefined;
    let terminating: Promise<void> | undefined;
    // SIGTERM to the whole group, SIGKILL to whatever is left after the grace period.
    const terminate = (): Promise<void> => {
      terminating ??= (async () => {
        if (pgid === undefined) return;
        signalGroup(pgid, 'SIGTERM');
        if (await waitFor(async () => !(await groupAlive(pgid)), grace)) return;
        signalGroup(pgid, 'SIGKILL');
        await waitFor(async () => !(await groupAlive(pgid)), 2_000);
      })();
      return terminating;
    };
    const stop = (reason: 'timeout' | 'cancelled') => {
      stopReason ??= reason;
      void terminate();
    };
    const timer = setTimeout(() => stop('timeout'), timeoutS * 1000);
    const onAbort = () => stop('cancelled');
    ctx.signal.addEventListener('abort', onAbort, { once: true });

    try {
      const status = await exited;
      if (spawnError) throw new Error(`could not start /bin/sh: ${spawnError.message}`);
      // Nothing outlives the call: background jobs still in the group are stopped too.
      await terminate();
      // A process that left the group (setsid) may still hold the pipes; stop reading from it.
      if (!isClosed) {
        await Promise.race([closed, sleep(500)]);
        if (!isClosed) {
          child.stdout.destroy();
          child.stderr.destroy();
        }
      }

      let head: string;
      if (stopReason === 'timeout')
        head = `timed out after ${timeoutS} s; the command and its process group were killed`;
      else if (stopReason === 'cancelled') head = 'cancelled; the command and its process group were killed';
      else if (status.code !== null) head = `exit ${status.code}`;
      else head = `killed by signal ${status.signal ?? 'unknown'}`;

      const parts = [head, section('stdout', out), section('stderr', err)];
      const dropped = out.dropped + err.dropped;
      if (dropped > 0) {
        parts.push(
          `[output capped: kept the first ${formatBytes(maxOutput)} of stdout and stderr together; ` +
            `dropped ${formatBytes(dropped)} more (stdout ${out.dropped}, stderr ${err.dropped}). ` +
            'Narrow the command (head, tail, grep, a redirect to a file) to see the rest.]',
        );
      }
      return parts.join('\n');
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  return {
    name: 'shell',
    description: [
      "Runs one command line with /bin/sh -c in the owner's workspace folder and returns its exit status,",
      'stdout and stderr. Use it to inspect and work with files in the workspace (ls, cat, grep, find, git,',
      'running scripts and builds). The owner may be asked to approve a command first; read-only commands',
      'usually run at once, while deleting, overwriting, installing or publishing always asks.',
      'The working directory is the workspace root and HOME is the workspace too; paths outside it are',
      'refused. The environment holds only PATH, LANG, LC_*, TERM and TZ: no secrets, tokens or keys.',
      'stdin is empty (/dev/null), so interactive programs get end-of-file: pass flags such as -y instead.',
      `Arguments: command (required) is the full command line, shell syntax allowed (pipes, &&, redirects);`,
      `timeout_s (optional) is a whole number of seconds, default ${SHELL_DEFAULT_TIMEOUT_S}, capped at`,
      `${SHELL_MAX_TIMEOUT_S}. At the timeout the command and every process it started are killed.`,
      'Background jobs (&) do not outlive the call: they are stopped when the command finishes.',
      'The result starts with "exit N" (or "timed out after N s" or "killed by signal S"), then a',
      '"--- stdout ---" and a "--- stderr ---" section. A non-zero exit is a normal result: read stderr and',
      `adjust. Output beyond ${formatBytes(maxOutput)} (stdout and stderr together) is dropped and the`,
      'dropped byte count is reported: filter with grep, head or tail rather than printing huge files.',
      'To create or replace a file with given text, prefer write_file over echo or heredocs.',
      'Example call: {"command": "grep -rn TODO notes/ | head -20", "timeout_s": 10} returns e.g.',
      '"exit 0\\n--- stdout ---\\nnotes/a.md:3:TODO call Bob\\n--- stderr: (empty) ---".',
    ].join(' '),
    inputSchema: {
      type: 'object',
      properties: {
        command: {
          type: 'string',
          minLength: 1,
          maxLength: SHELL_MAX_COMMAND_LENGTH,
          description: 'The command line for /bin/sh -c, run in the workspace root, e.g. "ls -la docs".',
        },
        timeout_s: {
          type: 'integer',
          minimum: 1,
          description: `Seconds before the command is killed; default ${SHELL_DEFAULT_TIMEOUT_S}, values above ${SHELL_MAX_TIMEOUT_S} are capped at ${SHELL_MAX_TIMEOUT_S}.`,
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    trusted: true,
    // The per-call timeout (at most 120 s, plus the kill grace and a short wait after SIGKILL) is enforced inside execute; the runner's
    // outer limit only catches a tool that hangs for some other reason.
    timeoutMs: (SHELL_MAX_TIMEOUT_S + 5) * 1000 + grace,
    clamp(args) {
      if (args.timeout_s === undefined) return args;
      return { ...args, timeout_s: clampTimeout(args.timeout_s) };
    },
    execute,
  };
}

export const shellTool: Tool<ShellArgs> = createShellTool();
