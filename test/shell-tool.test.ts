import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';
import { shellSafetyEnv } from '../src/permissions/home-config.ts';
import {
  createShellTool,
  SHELL_DEFAULT_MAX_OUTPUT_BYTES,
  type ShellArgs,
  scrubbedEnv,
  shellTool,
} from '../src/tools/builtin/shell.ts';
import { runTool } from '../src/tools/run-tool.ts';
import { type ToolContext, ToolInputError } from '../src/tools/types.ts';

let root: string;
let workspace: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'steward-shell-'));
  workspace = join(root, 'workspace');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function context(signal = new AbortController().signal): ToolContext {
  return {
    signal,
    sessionId: 'test-session',
    workspace,
    log: createLogger('silent', []),
    now: () => new Date(),
  };
}

/** Runs the tool as the chain would (clamp, then execute) and insists on a plain text result. */
async function run(args: ShellArgs, ctx = context(), tool = shellTool): Promise<string> {
  const output = await tool.execute(tool.clamp?.(args) ?? args, ctx);
  if (typeof output !== 'string') throw new Error('shell should return plain text');
  return output;
}

/**
 * The host jail gives commands their own PID namespace, so `$!` there is not a host PID: the tests
 * that follow a PID from the output run unjailed (test/shell-jail.test.ts covers the jailed tree).
 */
const unjailed = createShellTool({ hostJail: 'off' });

/** Gone means no such process, or a zombie nobody has reaped yet (it runs no code). */
function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

function pidFrom(output: string): number {
  const match = /PID=(\d+)/.exec(output);
  if (!match) throw new Error(`no PID in output:\n${output}`);
  return Number(match[1]);
}

async function waitForFile(path: string, ms = 5000): Promise<string> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (existsSync(path)) {
      const text = (await readFile(path, 'utf8')).trim();
      if (text !== '') return text;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${path} never appeared`);
}

describe('shell: results', () => {
  it('reports exit 0 and stdout, with an empty stderr labelled', async () => {
    const result = await run({ command: 'echo hello' });
    expect(result).toBe('exit 0\n--- stdout ---\nhello\n--- stderr: (empty) ---');
  });

  it('a non-zero exit is a normal result carrying stderr', async () => {
    const result = await run({ command: 'echo out; echo oops >&2; exit 3' });
    expect(result.split('\n')[0]).toBe('exit 3');
    expect(result).toContain('--- stdout ---\nout');
    expect(result).toContain('--- stderr ---\noops');
  });

  it('a missing program shows the exit code 127 and the shell message', async () => {
    const result = await run({ command: 'no-such-program-xyz' });
    expect(result.startsWith('exit 127')).toBe(true);
    expect(result).toMatch(/--- stderr ---\n.*not found/);
  });

  it('runs in the workspace (created when missing) with HOME set to it', async () => {
    expect(existsSync(workspace)).toBe(false);
    const result = await run({ command: 'pwd -P; echo "$HOME"; echo hi > made.txt' });
    const real = realpathSync(workspace);
    expect(result).toContain(`--- stdout ---\n${real}\n${workspace}`);
    expect(readFileSync(join(workspace, 'made.txt'), 'utf8')).toBe('hi\n');
  });

  it('passes the command as one argv element: nothing is interpolated', async () => {
    const result = await run({ command: `printf '%s|' "a b" '$HOME' "it's"` });
    expect(result).toContain("--- stdout ---\na b|$HOME|it's|");
  });

  it('stdin is /dev/null: a reader gets end-of-file at once', async () => {
    const result = await run({ command: 'cat; echo "read done"' });
    expect(result).toContain('--- stdout ---\nread done');
  });

  it('reports a death by signal', async () => {
    const result = await run({ command: 'kill -SEGV $$' }, context(), unjailed);
    expect(result.split('\n')[0]).toBe('killed by signal SIGSEGV');
  });

  it('refuses an empty or NUL-bearing command with a correction', async () => {
    await expect(run({ command: '   ' })).rejects.toBeInstanceOf(ToolInputError);
    await expect(run({ command: 'echo a\0b' })).rejects.toBeInstanceOf(ToolInputError);
  });
});

describe('shell: the environment is scrubbed', () => {
  const planted = [
    'STEWARD_MODEL_API_KEY',
    'STEWARD_TELEGRAM_TOKEN',
    'AWS_SECRET_ACCESS_KEY',
    'GITHUB_TOKEN',
  ];
  beforeEach(() => {
    for (const name of planted) process.env[name] = `planted-secret-${name}`;
    process.env.LC_TIME = 'C';
  });
  afterEach(() => {
    for (const name of planted) delete process.env[name];
    delete process.env.LC_TIME;
  });

  it('env shows only the allowlist, with HOME the workspace', async () => {
    const result = await run({ command: 'env' });
    expect(result).not.toContain('planted-secret');
    const stdout = result.split('--- stdout ---\n')[1]?.split('\n--- stderr')[0] ?? '';
    // Besides the allowlist, only steward's own safety settings (git, curl, wget, pagers).
    const safety = new Set(Object.keys(shellSafetyEnv()));
    const lines = stdout.split('\n').filter((line) => line !== '');
    expect(lines.filter((line) => !safety.has(line.split('=')[0] as string)).join('\n')).not.toMatch(
      /STEWARD_|TOKEN|SECRET|KEY/,
    );
    const names = lines.map((line) => line.split('=')[0] as string).filter((n) => !safety.has(n));
    const allowed = /^(PATH|LANG|LC_\w+|TERM|TZ|HOME|PWD|SHLVL|_|OLDPWD)$/; // PWD, SHLVL, _ are set by sh itself
    for (const name of names) expect(name).toMatch(allowed);
    expect(names).toContain('PATH');
    expect(names).toContain('LC_TIME');
    expect(stdout).toContain(`HOME=${workspace}`);
  });

  it('a planted secret is not reachable by name either', async () => {
    const result = await run({ command: 'echo "[$STEWARD_MODEL_API_KEY][$GITHUB_TOKEN]"' });
    expect(result).toContain('--- stdout ---\n[][]');
  });

  it('scrubbedEnv keeps only the allowlist and supplies a PATH', () => {
    const env = scrubbedEnv(
      { STEWARD_X: 'a', LC_ALL: 'C', TZ: 'UTC', TERM: 'xterm', LANG: 'C', HOME: '/root', USER: 'me' },
      '/ws',
    );
    expect(env).toEqual({
      LC_ALL: 'C',
      TZ: 'UTC',
      TERM: 'dumb', // no terminal is attached: programs must not emit escape codes
      LANG: 'C',
      HOME: '/ws',
      PATH: '/usr/local/bin:/usr/bin:/bin',
    });
  });
});

describe('shell: timeouts and cancellation kill the whole process group', () => {
  it('kills the shell and a background grandchild at the timeout', async () => {
    const started = Date.now();
    const result = await run(
      { command: 'sleep 300 & echo "PID=$!"; sleep 300; echo never', timeout_s: 1 },
      context(),
      unjailed,
    );
    const elapsed = Date.now() - started;
    expect(result.split('\n')[0]).toBe('timed out after 1 s; the command and its process group were killed');
    expect(result).not.toContain('never');
    expect(processGone(pidFrom(result))).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(5000);
  });

  it('escalates to SIGKILL when the group ignores SIGTERM', async () => {
    const tool = createShellTool({ killGraceMs: 200, hostJail: 'off' });
    const started = Date.now();
    const result = await run(
      { command: `trap '' TERM; sleep 300 & echo "PID=$!"; while :; do sleep 1; done`, timeout_s: 1 },
      context(),
      tool,
    );
    expect(result.startsWith('timed out after 1 s')).toBe(true);
    expect(processGone(pidFrom(result))).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('kills the group when the signal aborts, and returns after it is gone', async () => {
    const controller = new AbortController();
    const pending = run(
      { command: 'sleep 300 & echo $! > child.pid; sleep 300', timeout_s: 60 },
      context(controller.signal),
      unjailed,
    );
    const pid = Number(await waitForFile(join(workspace, 'child.pid')));
    expect(processGone(pid)).toBe(false);
    controller.abort();
    const result = await pending;
    expect(result.split('\n')[0]).toBe('cancelled; the command and its process group were killed');
    expect(processGone(pid)).toBe(true);
  });

  it('through runTool, a cancelled turn still kills the group', async () => {
    const controller = new AbortController();
    const ctx = context(controller.signal);
    const outcome = runTool(unjailed as never, { command: 'sleep 300 & echo $! > bg.pid; wait' }, ctx);
    const pid = Number(await waitForFile(join(workspace, 'bg.pid')));
    controller.abort();
    expect(await outcome).toEqual({ ok: false, content: 'shell was cancelled.' });
    await expect.poll(() => processGone(pid), { timeout: 5000 }).toBe(true);
  });

  it('does nothing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await run({ command: 'echo ran > ran.txt' }, context(controller.signal));
    expect(result).toMatch(/cancelled/);
    expect(existsSync(join(workspace, 'ran.txt'))).toBe(false);
  });

  it('background jobs do not outlive a command that finished normally', async () => {
    const started = Date.now();
    const result = await run({ command: 'sleep 300 & echo "PID=$!"' }, context(), unjailed);
    expect(result.startsWith('exit 0')).toBe(true);
    expect(processGone(pidFrom(result))).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('clamps timeout_s 500 to 120 and leaves a missing one alone', () => {
    expect(shellTool.clamp?.({ command: 'x', timeout_s: 500 })).toEqual({ command: 'x', timeout_s: 120 });
    expect(shellTool.clamp?.({ command: 'x', timeout_s: 5 })).toEqual({ command: 'x', timeout_s: 5 });
    expect(shellTool.clamp?.({ command: 'x' })).toEqual({ command: 'x' });
    const args = { command: 'x', timeout_s: 121 };
    shellTool.clamp?.(args);
    expect(args.timeout_s).toBe(121); // not mutated
  });

  it('the runner outer limit is above the largest clamped timeout', () => {
    expect(shellTool.timeoutMs).toBeGreaterThanOrEqual(125_000);
  });
});

describe('shell: output is capped', () => {
  it('keeps the first bytes of a small configured cap and counts the rest', async () => {
    const cap = 64 * 1024;
    const tool = createShellTool({ maxOutputBytes: cap });
    const result = await run({ command: 'head -c 200000 /dev/zero | tr "\\0" a' }, context(), tool);
    expect(result.startsWith('exit 0')).toBe(true);
    const stdout = result.split('--- stdout ---\n')[1]?.split('\n--- stderr')[0] ?? '';
    expect(stdout).toBe('a'.repeat(cap));
    expect(result).toContain(`dropped ${200000 - cap} bytes`);
    expect(result).toContain(`(stdout ${200000 - cap}, stderr 0)`);
  });

  it('shares the cap between stdout and stderr', async () => {
    const tool = createShellTool({ maxOutputBytes: 1000 });
    const result = await run(
      { command: 'head -c 800 /dev/zero | tr "\\0" o; head -c 800 /dev/zero | tr "\\0" e >&2' },
      context(),
      tool,
    );
    expect(result).toContain(`--- stdout ---\n${'o'.repeat(800)}\n--- stderr ---\n${'e'.repeat(200)}`);
    expect(result).toContain('(stdout 0, stderr 600)');
  });

  it('with the default cap, ~11 MiB of output keeps 10 MiB and reports the dropped 1 MiB', async () => {
    const total = 11 * 1024 * 1024;
    const result = await run({ command: `head -c ${total} /dev/zero | tr "\\0" x` });
    const stdout = result.split('--- stdout ---\n')[1]?.split('\n--- stderr')[0] ?? '';
    expect(stdout.length).toBe(SHELL_DEFAULT_MAX_OUTPUT_BYTES);
    expect(result).toContain(`dropped ${total - SHELL_DEFAULT_MAX_OUTPUT_BYTES} bytes (1 MiB)`);
  });
});

describe('shell: schema and description', () => {
  const ajv = new Ajv({ strict: true, allErrors: true });
  const validate = ajv.compile(shellTool.inputSchema);

  it.each([
    [{ command: 'ls' }, true],
    [{ command: 'ls', timeout_s: 10 }, true],
    [{ command: 'ls', timeout_s: 500 }, true], // allowed by the schema, clamped by policy
    [{}, false],
    [{ command: '' }, false],
    [{ command: 'ls', timeout_s: 1.5 }, false],
    [{ command: 'ls', timeout_s: 0 }, false],
    [{ command: 'ls', timeout_s: '10' }, false],
    [{ command: ['ls'] }, false],
    [{ command: 'ls', cwd: '/' }, false],
    [{ command: 'ls', env: { A: '1' } }, false],
  ])('%j valid: %s', (args, ok) => {
    expect(validate(args)).toBe(ok);
  });

  it('is trusted, named shell, with a manual and an example', () => {
    expect(shellTool.name).toBe('shell');
    expect(shellTool.trusted).toBe(true);
    expect(shellTool.inputSchema.additionalProperties).toBe(false);
    expect(shellTool.description).toMatch(/Example call: \{/);
    expect(shellTool.description).toMatch(/120/);
    expect(shellTool.description.length).toBeGreaterThan(300);
  });
});
