import { spawn } from 'node:child_process';
import { mkdir, realpath } from 'node:fs/promises';
import { constants } from 'node:os';
import { resolve } from 'node:path';
import { shellSafetyEnv } from '../../permissions/home-config.ts';
import type { SandboxClient } from '../../sandbox/client.ts';
import {
  DEFAULT_HOST_JAIL_MODE,
  findHostShell,
  type HostJailMode,
  type JailStatus,
} from '../../sandbox/host-jail.ts';
import { type SandboxConfig, shellRunsIn } from '../../sandbox/sandbox-config.ts';
import { type BashStatus, dialectEnv } from '../../sandbox/shell-dialect.ts';
import { type Isolation, isolationNote, shellInvocation } from '../../sandbox/shell-invocation.ts';
import type { Tool, ToolContext } from '../types.ts';
import { ToolInputError } from '../types.ts';
import { runInContainer } from './shell-container.ts';
import { type Captured, collector, formatBytes, resultParts } from './shell-output.ts';
import { groupAlive, signalGroup, sleep, waitFor } from './shell-process.ts';

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
  /** `sandbox.host_jail`. Default `auto`. */
  hostJail?: HostJailMode;
  /** bash and the jail, from a caller that knows them (tests). Absent: found at the first host call. */
  host?: { bash: BashStatus; jail: JailStatus };
  /** Variables added to every command's environment (e.g. git safety); bash's own names are refused. */
  extraEnv?: Readonly<Record<string, string>>;
  /** Host paths bound read-only inside the jail besides the system folders, e.g. a toolchain in /opt. */
  readOnlyPaths?: readonly string[];
  /**
   * The configured sandbox: calls that must run in a container go through sandboxd (unattended
   * turns always, chat's with `sandbox.shell: container`); when it is unreachable they fail.
   */
  sandbox?: { config: Pick<SandboxConfig, 'shell' | 'configured'>; client: SandboxClient };
}

/**
 * Per-call execution options, carried on the tool context by the caller that judged the call: a call
 * approved as a network call gets the host network; everything else runs with loopback only.
 */
export interface ShellExecution {
  network?: boolean;
  extraEnv?: Readonly<Record<string, string>>;
}
export type ShellToolContext = ToolContext & { shell?: ShellExecution };

export const SHELL_DEFAULT_TIMEOUT_S = 30;
export const SHELL_MAX_TIMEOUT_S = 120;
export const SHELL_DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024;
/** One argv element may not exceed 128 KiB on Linux; 30 000 characters stay under it in UTF-8. */
export const SHELL_MAX_COMMAND_LENGTH = 30_000;
const DEFAULT_KILL_GRACE_MS = 2_000;

/**
 * The environment a command sees: an allowlist, never a denylist, so no STEWARD_* variable, token or
 * key leaks by a name nobody thought of. HOME is the workspace. Kept for callers of the old name.
 */
export function scrubbedEnv(base: NodeJS.ProcessEnv, workspace: string): Record<string, string> {
  return dialectEnv(base, workspace);
}

function clampTimeout(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return SHELL_DEFAULT_TIMEOUT_S;
  return Math.min(SHELL_MAX_TIMEOUT_S, Math.max(1, Math.ceil(value)));
}

/** A jail reports a command killed by signal N as exit 128+N; name the signal so the model need not guess. */
function signalHint(code: number, isolation: Isolation): string {
  if (isolation !== 'bwrap' || code <= 128) return '';
  const name = Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0];
  return name ? ` (128 + ${name}: the command was likely killed by that signal)` : '';
}

export function createShellTool(options: ShellToolOptions = {}): Tool<ShellArgs> {
  const maxOutput = options.maxOutputBytes ?? SHELL_DEFAULT_MAX_OUTPUT_BYTES;
  const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const mode = options.hostJail ?? DEFAULT_HOST_JAIL_MODE;
  // Found once per tool, and shared by calls that come together.
  let host: Promise<{ bash: BashStatus; jail: JailStatus }> | undefined;
  const hostShell = () => {
    host ??= options.host ? Promise.resolve(options.host) : findHostShell(mode);
    return host;
  };

  async function execute(args: ShellArgs, ctx: ShellToolContext): Promise<string> {
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

    await mkdir(resolve(ctx.workspace), { recursive: true });
    const where = shellRunsIn(options.sandbox?.config, ctx.unattended === true);
    if (where === 'container' && options.sandbox) {
      return runInContainer(options.sandbox.client, {
        command,
        timeoutS,
        workspace: await realpath(resolve(ctx.workspace)),
        maxOutput,
        signal: ctx.signal,
      });
    }
    // The jail binds the real path; HOME and the working directory are that same path inside.
    const workspace = await realpath(resolve(ctx.workspace));
    const { bash, jail } = await hostShell();
    // Git, curl, wget, less and pagers never read configuration a command could have planted: the
    // classifier judges `git status` and friends read-only only under these variables.
    const env = dialectEnv(options.baseEnv ?? process.env, workspace, {
      ...shellSafetyEnv(),
      ...options.extraEnv,
      ...ctx.shell?.extraEnv,
    });
    const invocation = shellInvocation({
      bash,
      jail,
      mode,
      command,
      workspace,
      network: ctx.network === true || ctx.shell?.network === true,
      env,
      asRoot: process.getuid?.() === 0,
      ...(options.readOnlyPaths ? { readOnly: options.readOnlyPaths } : {}),
    });
    // An error result, not an exit status: nothing ran, and the operator has something to fix.
    if (invocation.kind === 'refused') throw new Error(`refused, nothing ran: ${invocation.reason}`);
    if (ctx.signal.aborted) return 'cancelled before the command started; nothing ran';

    // The command is one argv element of bash: nothing is interpolated, quoted or rebuilt here.
    const child = spawn(invocation.file, invocation.args, {
      cwd: workspace,
      env: invocation.env,
      detached: true, // setsid(): its own session and process group, so the whole group can be killed
      stdio: ['ignore', 'pipe', 'pipe'], // stdin is /dev/null
    });

    const out: Captured = { chunks: [], dropped: 0 };
    const err: Captured = { chunks: [], dropped: 0 };
    const collect = collector(maxOutput);
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
    // SIGTERM to the whole group, SIGKILL to whatever is left after the grace period. A jail is
    // SIGKILLed at once: the command's tree lives in its own PID namespace (and session), out of
    // reach of a group signal, and dies with the namespace when the jail's init does.
    const jailed = invocation.isolation !== 'none';
    const terminate = (): Promise<void> => {
      terminating ??= (async () => {
        if (pgid === undefined) return;
        signalGroup(pgid, jailed ? 'SIGKILL' : 'SIGTERM');
        if (await waitFor(async () => !(await groupAlive(pgid)), jailed ? 2_000 : grace)) return;
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
      if (spawnError) throw new Error(`could not start ${invocation.file}: ${spawnError.message}`);
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
      else if (status.code !== null)
        head = `exit ${status.code}${signalHint(status.code, invocation.isolation)}`;
      else head = `killed by signal ${status.signal ?? 'unknown'}`;

      const parts = resultParts(head, out, err, maxOutput);
      const note = isolationNote(invocation.isolation, mode);
      if (note) parts.push(note);
      // With a sandbox configured, say that this one did not use it.
      if (options.sandbox?.config.configured) parts.push('[ran on the host: sandbox.shell is host]');
      return parts.join('\n');
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  return {
    name: 'shell',
    description: [
      "Runs one command line with bash -c in the owner's workspace folder and returns its exit status,",
      'stdout and stderr. Use it to inspect and work with files in the workspace (ls, cat, grep, find, git,',
      'running scripts and builds). The owner may be asked to approve a command first; read-only commands',
      'usually run at once, while deleting, overwriting, installing or publishing always asks.',
      'The working directory is the workspace root and HOME is the workspace too; paths outside it are',
      'refused. The environment holds only PATH, LANG, LC_*, TERM=dumb and TZ: no secrets, tokens or keys.',
      'Commands run in a jail: only the workspace and a private /tmp are writable, other processes are',
      'invisible, and there is no network unless the owner approved the call as a network call.',
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
          description: 'The command line for bash -c, run in the workspace root, e.g. "ls -la docs".',
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
