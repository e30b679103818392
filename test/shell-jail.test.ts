// The host jail and the dialect with real processes: what a command can see, write and reach.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';
import { shellSafetyEnv } from '../src/permissions/home-config.ts';
import { type JailStatus, probeJail } from '../src/sandbox/host-jail.ts';
import { type BashStatus, resolveBash } from '../src/sandbox/shell-dialect.ts';
import {
  createShellTool,
  type ShellArgs,
  type ShellExecution,
  type ShellToolContext,
} from '../src/tools/builtin/shell.ts';
import { runTool } from '../src/tools/run-tool.ts';

let bash: BashStatus;
let bwrap: JailStatus;
const UNSHARE: JailStatus = {
  kind: 'unshare',
  path: '/usr/bin/unshare',
  setpriv: '/usr/bin/setpriv',
  reason: 'forced by the test',
};
let root: string;
let workspace: string;

beforeAll(async () => {
  bash = await resolveBash();
  expect(bash.kind, 'bash 5.2+ is needed').toBe('ok');
  if (bash.kind !== 'ok') return;
  bwrap = await probeJail({ bash: bash.path });
  expect(bwrap.kind, 'install bubblewrap (scripts/test-services.sh does)').toBe('bwrap');
});
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'steward-jail-'));
  workspace = join(root, 'workspace');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function context(shell: ShellExecution = {}, signal = new AbortController().signal): ShellToolContext {
  return {
    signal,
    sessionId: 'test-session',
    workspace,
    log: createLogger('silent', []),
    now: () => new Date(),
    shell,
  };
}

const jailed = (jail: 'bwrap' | 'unshare' | 'none' = 'bwrap', extra = {}) =>
  createShellTool({
    host: {
      bash,
      jail: jail === 'bwrap' ? bwrap : jail === 'unshare' ? UNSHARE : { kind: 'none', reason: 'test' },
    },
    killGraceMs: 300,
    ...extra,
  });

async function run(tool: ReturnType<typeof createShellTool>, args: ShellArgs, ctx = context()) {
  const output = await tool.execute(tool.clamp?.(args) ?? args, ctx);
  if (typeof output !== 'string') throw new Error('shell should return plain text');
  return output;
}
const stdout = (result: string) => result.split('--- stdout ---\n')[1]?.split('\n--- stderr')[0] ?? '';

/** Host PIDs whose argv is exactly `sleep <seconds>`: a jailed `$!` is a namespace PID, useless here. */
function sleepers(seconds: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const zombie = stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
      if (!zombie && argv[0]?.endsWith('sleep') && argv[1] === String(seconds)) found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

describe.each(['bwrap', 'unshare'] as const)('jail %s: steward itself is out of reach', (kind) => {
  const planted = `planted-secret-${Math.random().toString(36).slice(2)}`;
  beforeEach(() => {
    process.env.STEWARD_MODEL_API_KEY = planted;
    process.env.STEWARD_JAIL_TEST_SECRET = planted;
  });
  afterEach(() => {
    delete process.env.STEWARD_MODEL_API_KEY;
    delete process.env.STEWARD_JAIL_TEST_SECRET;
  });

  it("cannot read steward's environment through /proc", async () => {
    // /proc/PID/environ shows a process's initial environment, so the stand-in for steward is a
    // process started with the secret in it (setting process.env here would not show there).
    const steward = spawn('sleep', ['60'], {
      env: { PATH: '/usr/bin:/bin', STEWARD_MODEL_API_KEY: planted },
    });
    try {
      const command = `cat /proc/*/environ | tr '\\0' '\\n'; grep -rao '${planted}' /proc/[0-9]*/environ; echo "pids: $(ls -d /proc/[0-9]* | wc -l)"`;
      const result = await run(jailed(kind), { command });
      expect(result).not.toContain(planted);
      expect(Number(/pids: (\d+)/.exec(result)?.[1])).toBeLessThan(10); // only the jail's own processes
      // The control: the same command unjailed finds it.
      const control = await run(jailed('none'), { command });
      expect(control).toContain(`STEWARD_MODEL_API_KEY=${planted}`);
    } finally {
      steward.kill('SIGKILL');
    }
  });

  it('sees no STEWARD_* variable and only the allowlisted names', async () => {
    const result = await run(jailed(kind), { command: 'env' });
    expect(result).not.toContain(planted);
    expect(result).not.toMatch(/STEWARD_/);
    const safety = new Set(Object.keys(shellSafetyEnv()));
    const names = stdout(result)
      .split('\n')
      .map((line) => line.split('=')[0] as string)
      .filter((name) => !safety.has(name));
    for (const name of names) expect(name).toMatch(/^(PATH|LANG|LC_\w+|TERM|TZ|HOME|PWD|SHLVL|_|OLDPWD)$/);
    expect(result).toContain('TERM=dumb');
  });

  it('holds no capabilities', async () => {
    const result = await run(jailed(kind), { command: 'grep CapEff /proc/self/status' });
    expect(stdout(result)).toBe('CapEff:\t0000000000000000');
  });

  it('cannot write host-wide settings in /proc even as root', async () => {
    // kernel.hostname is per UTS namespace, so a write that got through would still harm nothing.
    const result = await run(jailed(kind), {
      command:
        'echo jail > /proc/sys/kernel/hostname; echo "sys $?"; test -w /proc/sysrq-trigger; echo "sysrq $?"',
    });
    expect(stdout(result)).toBe('sys 1\nsysrq 1');
    expect(result).toMatch(/Read-only file system/);
  });

  it('cannot reach a loopback server unless the call is a network call', async () => {
    const server: Server = createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const port = (server.address() as { port: number }).port;
    const command = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3`;
    try {
      const offline = await run(jailed(kind), { command });
      expect(offline).not.toContain('hello');
      expect(offline.startsWith('exit 0')).toBe(false);
      const online = await run(jailed(kind), { command }, context({ network: true }));
      expect(online).toContain('--- stdout ---\nhello');
    } finally {
      server.close();
    }
  });

  it('a timeout kills the whole tree, background children included', async () => {
    const seconds = 900_000 + Math.floor(Math.random() * 90_000);
    const started = Date.now();
    const result = await run(jailed(kind), {
      command: `sleep ${seconds} & (sleep ${seconds} &) ; sleep ${seconds}; echo never`,
      timeout_s: 1,
    });
    expect(result.startsWith('timed out after 1 s')).toBe(true);
    expect(result).not.toContain('never');
    expect(Date.now() - started).toBeLessThan(5000);
    await expect.poll(() => sleepers(seconds), { timeout: 2000 }).toEqual([]);
  });

  it('an abort kills the whole tree, and the tree really existed', async () => {
    const seconds = 900_000 + Math.floor(Math.random() * 90_000);
    const controller = new AbortController();
    const pending = run(
      jailed(kind),
      { command: `sleep ${seconds} & (setsid sleep ${seconds} &); sleep ${seconds}`, timeout_s: 60 },
      context({}, controller.signal),
    );
    await expect.poll(() => sleepers(seconds).length, { timeout: 5000 }).toBe(3);
    controller.abort();
    expect((await pending).split('\n')[0]).toBe('cancelled; the command and its process group were killed');
    await expect.poll(() => sleepers(seconds), { timeout: 2000 }).toEqual([]);
  });

  it('background jobs die when the command finishes', async () => {
    const seconds = 900_000 + Math.floor(Math.random() * 90_000);
    const result = await run(jailed(kind), { command: `(setsid sleep ${seconds} &); echo done` });
    expect(result.startsWith('exit 0')).toBe(true);
    await expect.poll(() => sleepers(seconds), { timeout: 2000 }).toEqual([]);
  });
});

describe('jail bwrap: the filesystem', () => {
  it('writes inside the workspace, not outside it', async () => {
    const outside = join(root, 'outside.txt');
    const result = await run(jailed(), {
      command: `echo in > inside.txt; echo out > ${outside}; echo etc > /etc/steward-jail-test; echo usr > /usr/steward-jail-test; echo "status $?"`,
    });
    expect(readFileSync(join(workspace, 'inside.txt'), 'utf8')).toBe('in\n');
    expect(existsSync(outside)).toBe(false);
    expect(existsSync('/etc/steward-jail-test')).toBe(false);
    expect(existsSync('/usr/steward-jail-test')).toBe(false);
    expect(result).toMatch(/Read-only file system|No such file or directory/);
  });

  it('gets a private /tmp that vanishes with the command', async () => {
    const name = `/tmp/steward-jail-${Math.random().toString(36).slice(2)}`;
    const result = await run(jailed(), { command: `echo x > ${name} && cat ${name} && ls /tmp | wc -l` });
    expect(result).toContain('--- stdout ---\nx\n');
    expect(existsSync(name)).toBe(false);
  });

  it('sees /etc as an allowlist: no shadow, no steward config', async () => {
    const result = await run(jailed(), {
      command: 'ls /etc/shadow /etc/ssh 2>&1; test -r /etc/passwd && echo passwd-ok',
    });
    expect(result).toContain('passwd-ok');
    expect(result).toMatch(/cannot access '\/etc\/shadow'/);
    expect(result).not.toMatch(/^root:/m);
  });

  it('runs in the workspace with HOME set to it, reading /usr as usual', async () => {
    const result = await run(jailed(), { command: 'pwd -P; echo "$HOME"; ls /usr/bin/bash' });
    const real = realpathSync(workspace);
    expect(stdout(result)).toBe(`${real}\n${real}\n/usr/bin/bash`);
  });

  it('adds extraEnv from the options and from the call', async () => {
    const tool = jailed('bwrap', { extraEnv: { GIT_CONFIG_NOSYSTEM: '1' } });
    const result = await run(
      tool,
      { command: 'echo "$GIT_CONFIG_NOSYSTEM $GIT_TERMINAL_PROMPT"' },
      context({ extraEnv: { GIT_TERMINAL_PROMPT: '0' } }),
    );
    expect(stdout(result)).toBe('1 0');
    await expect(
      run(tool, { command: 'true' }, context({ extraEnv: { BASH_ENV: '/tmp/x' } })),
    ).rejects.toThrow(/BASH_ENV/);
  });

  it('names the signal that killed a jailed command', async () => {
    const result = await run(jailed(), { command: 'kill -SEGV $$' });
    expect(result.split('\n')[0]).toBe(
      'exit 139 (128 + SIGSEGV: the command was likely killed by that signal)',
    );
  });
});

describe('the dialect that runs is bash, as judged', () => {
  // bash: one $'...' word. dash: `echo $X\`, then `rm -rf build`, then `echo \`.
  const differential = `echo $'X\\' ; rm -rf build ; echo '\\'`;
  beforeEach(() => {
    mkdirSync(join(workspace, 'build'), { recursive: true });
    writeFileSync(join(workspace, 'build', 'marker'), 'keep');
  });

  it.each(['bwrap', 'unshare', 'none'] as const)('%s: the $-quoted middle rm does not run', async (kind) => {
    const result = await run(jailed(kind), { command: differential });
    expect(stdout(result)).toBe("X' ; rm -rf build ; echo '");
    expect(existsSync(join(workspace, 'build', 'marker'))).toBe(true);
  });

  it('the control: dash would have run it', () => {
    execFileSync('/bin/dash', ['-c', differential], { cwd: workspace, stdio: 'ignore' });
    expect(existsSync(join(workspace, 'build', 'marker'))).toBe(false);
  });

  it('starts with the fixed options whatever the environment says', async () => {
    process.env.BASH_ENV = join(root, 'evil.sh');
    process.env.SHELLOPTS = 'noglob:xtrace';
    process.env.BASHOPTS = 'extglob:dotglob:nullglob';
    process.env.IFS = 'e';
    writeFileSync(join(root, 'evil.sh'), 'touch "$HOME/bash-env-ran"\n');
    try {
      mkdirSync(workspace, { recursive: true });
      writeFileSync(join(workspace, '.hidden'), '');
      const result = await run(jailed('none'), {
        command:
          'shopt extglob globstar dotglob nullglob failglob globskipdots xpg_echo; echo $-; echo .* ; x="a e b"; echo $x',
      });
      const lines = stdout(result).split('\n');
      expect(lines.slice(0, 7).map((l) => l.replace(/\s+/g, ' '))).toEqual([
        'extglob off',
        'globstar off',
        'dotglob off',
        'nullglob off',
        'failglob off',
        'globskipdots on',
        'xpg_echo off',
      ]);
      expect(lines[7]).not.toMatch(/[fxH]/); // no noglob, no xtrace, no history expansion
      expect(lines[8]).toBe('.hidden'); // not ". .. .hidden"
      expect(lines[9]).toBe('a e b'); // IFS is the default
      expect(existsSync(join(workspace, 'bash-env-ran'))).toBe(false);
    } finally {
      for (const name of ['BASH_ENV', 'SHELLOPTS', 'BASHOPTS', 'IFS']) delete process.env[name];
    }
  });
});

describe('required mode', () => {
  it('refuses to run unjailed, and nothing runs', async () => {
    const tool = createShellTool({
      host: { bash, jail: { kind: 'none', reason: 'no bwrap' } },
      hostJail: 'required',
    });
    const outcome = await runTool(tool as never, { command: 'touch ran.txt' }, context());
    expect(outcome.ok).toBe(false);
    expect(outcome.content).toMatch(/^shell failed: refused, nothing ran: sandbox.host_jail is required/);
    expect(outcome.content).toMatch(/install bubblewrap/);
    expect(existsSync(join(workspace, 'ran.txt'))).toBe(false);
  });

  it('auto without a jail runs and says so', async () => {
    const result = await run(jailed('none'), { command: 'echo hi' });
    expect(result).toContain('--- stdout ---\nhi');
    expect(result.split('\n').at(-1)).toMatch(/ran unjailed on the host/);
  });
});
