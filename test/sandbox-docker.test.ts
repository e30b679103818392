// The sandbox against a real Docker engine (scripts/test-services.sh starts one with vfs storage and
// imports the images; nothing is pulled). One small image for almost everything: vfs copies the
// whole root for each container. Tests in this file run one at a time.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';
import { sandboxClient } from '../src/sandbox/client.ts';
import { OWNER_LABEL } from '../src/sandbox/container-spec.ts';
import { createSandboxd, type Sandboxd } from '../src/sandbox/daemon.ts';
import { FRAME, FrameReader, type SandboxRequest } from '../src/sandbox/protocol.ts';
import { resolveSandbox, type SandboxConfig } from '../src/sandbox/sandbox-config.ts';
import { createShellTool } from '../src/tools/builtin/shell.ts';
import { dockerEnv, labelled } from './support/docker.ts';
import { tempDir } from './support/services.ts';

const docker = dockerEnv();
const BIN = resolve(import.meta.dirname, '../bin/steward.js');
const SECRET = 'sbx-canary-8c1f0e2a';

async function run(client: ReturnType<typeof sandboxClient>, request: SandboxRequest) {
  let stdout = '';
  let stderr = '';
  const outcome = await client.run(request, {
    onStdout: (b) => {
      stdout += b.toString();
    },
    onStderr: (b) => {
      stderr += b.toString();
    },
  });
  return { outcome, stdout, stderr };
}

/** Sends raw text to the socket and returns the frames that come back. */
function raw(socket: string, text: string): Promise<Array<{ type: number; payload: string }>> {
  return new Promise((done) => {
    const reader = new FrameReader();
    const frames: Array<{ type: number; payload: string }> = [];
    const conn = connect(socket, () => conn.write(text));
    conn.on('data', (c: Buffer) => {
      for (const f of reader.push(c)) frames.push({ type: f.type, payload: f.payload.toString() });
    });
    conn.on('close', () => done(frames));
    conn.on('error', () => {});
  });
}

describe.skipIf(!docker)('sandboxd on a real Docker engine', () => {
  const dir = tempDir('steward-sbx-');
  const root = join(dir.path, 'workspace');
  const ws = join(root, 'session');
  let config: SandboxConfig;
  let daemon: Sandboxd;
  let client: ReturnType<typeof sandboxClient>;
  const req = (command: string, timeoutMs = 20_000): SandboxRequest => ({
    runId: 't',
    command,
    timeoutMs,
    workspace: ws,
  });

  beforeAll(async () => {
    mkdirSync(ws, { recursive: true });
    process.env.STEWARD_SANDBOX_TEST_SECRET = SECRET; // in sandboxd's own environment
    config = {
      ...resolveSandbox(
        { socket: join(dir.path, 'run', 'sandboxd.sock'), image: docker?.image },
        dir.path,
        root,
      ),
      memoryMb: 64,
      pids: 64,
    };
    daemon = createSandboxd({ docker: new Docker(), config, log: createLogger('silent', []) });
    await daemon.start();
    client = sandboxClient(config.socket);
  });
  afterAll(async () => {
    await daemon?.stop();
    delete process.env.STEWARD_SANDBOX_TEST_SECRET;
    expect(labelled(`${OWNER_LABEL}=${config.socket}`)).toEqual([]);
    dir.remove();
  });

  it('listens on an owner-only socket', async () => {
    const { statSync } = await import('node:fs');
    expect(statSync(config.socket).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir.path, 'run')).mode & 0o777).toBe(0o700);
  });

  it('runs as uid 65534 with no capabilities and no new privileges', async () => {
    const r = await run(
      client,
      req('id -u; id -g; grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs)" /proc/self/status'),
    );
    expect(r.outcome).toMatchObject({ kind: 'ran', result: { exitCode: 0 } });
    const [uid, gid] = r.stdout.split('\n');
    expect(uid).toBe('65534');
    expect(gid).not.toBe('0');
    expect(r.stdout).toMatch(/CapEff:\s+0000000000000000/);
    expect(r.stdout).toMatch(/CapBnd:\s+0000000000000000/);
    expect(r.stdout).toMatch(/NoNewPrivs:\s+1/);
  }, 60_000);

  it('writes outside the workspace fail; writes inside land on the host', async () => {
    const r = await run(
      client,
      req(
        'for p in /x /etc/x /bin/x /usr/x /root/x; do touch $p 2>/dev/null && echo WROTE $p; done; echo made > inside.txt; mkdir -p sub && echo deep > sub/f; echo tmp > /tmp/t && cat /tmp/t',
      ),
    );
    expect(r.stdout).not.toContain('WROTE');
    expect(r.stdout).toContain('tmp');
    expect(readFileSync(join(ws, 'inside.txt'), 'utf8')).toBe('made\n');
    expect(readFileSync(join(ws, 'sub', 'f'), 'utf8')).toBe('deep\n');
  }, 60_000);

  it("sees none of steward's environment and no Docker socket", async () => {
    const r = await run(
      client,
      req(
        'env; cat /proc/1/environ | tr "\\0" "\\n"; ls -la /var/run/docker.sock /run/docker.sock 2>&1; find / -xdev -type s 2>/dev/null; echo end',
      ),
    );
    expect(r.stdout).not.toContain(SECRET);
    expect(r.stdout).not.toMatch(/STEWARD_|DOCKER_HOST/);
    expect(r.stdout).toMatch(/docker\.sock: No such file or directory/);
    expect(r.stdout.split('\n').filter((l) => l.includes('.sock') && !l.includes('No such'))).toEqual([]);
  }, 60_000);

  it('has no network: a loopback server on the host is unreachable', async () => {
    let hits = 0;
    const server = createServer((s) => {
      hits++;
      s.end();
    });
    await new Promise<void>((d) => server.listen(0, '0.0.0.0', d));
    const { port } = server.address() as { port: number };
    const r = await run(
      client,
      req(
        `(echo hi > /dev/tcp/127.0.0.1/${port}) 2>&1 && echo CONNECTED; (echo hi > /dev/tcp/172.17.0.1/${port}) 2>&1 && echo CONNECTED; cat /proc/net/dev | tail -n +3 | cut -d: -f1`,
      ),
    );
    server.close();
    expect(r.stdout).not.toContain('CONNECTED');
    expect(r.stdout.trim().split('\n').at(-1)?.trim()).toBe('lo');
    expect(hits).toBe(0);
  }, 60_000);

  it('bounds a fork bomb by the pids limit, and steward stays up', async () => {
    // The longest this process went without running its own timer while the bomb went off.
    let last = Date.now();
    let longestGap = 0;
    const tick = () => {
      const now = Date.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    };
    const timer = setInterval(tick, 100);
    const r = await run(client, req(':(){ :|:& };:; sleep 1; echo done', 4_000));
    clearInterval(timer);
    tick();
    expect(r.outcome).toMatchObject({ kind: 'ran' });
    expect(r.stderr).toMatch(/fork|Resource temporarily unavailable|retry/i);
    // This process kept running its own work while the bomb went off.
    expect(longestGap).toBeLessThan(2_000);
    const host = await new Promise<string>((d) => execFile('echo', ['alive'], (_e, out) => d(out)));
    expect(host).toBe('alive\n');
    expect(labelled(`${OWNER_LABEL}=${config.socket}`)).toEqual([]);
  }, 60_000);

  it('kills a memory hog at the memory limit and says so', async () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell command, not a template
    const r = await run(client, req('x=$(head -c 300000000 /dev/zero | tr "\\0" a); echo survived ${#x}'));
    expect(r.outcome).toMatchObject({ kind: 'ran', result: { oomKilled: true } });
    expect(r.stdout).not.toContain('survived');
  }, 60_000);

  it('kills and removes the container at the timeout', async () => {
    const t = Date.now();
    const r = await run(client, req('sleep 30; echo late', 1_000));
    expect(Date.now() - t).toBeLessThan(15_000);
    expect(r.outcome).toMatchObject({ kind: 'ran', result: { timedOut: true, exitCode: null } });
    expect(r.stdout).not.toContain('late');
    expect(labelled(`${OWNER_LABEL}=${config.socket}`)).toEqual([]);
  }, 60_000);

  it('streams a 100 MB output through without holding it', async () => {
    let bytes = 0;
    const outcome = await client.run(req('head -c 100000000 /dev/zero; echo err >&2', 60_000), {
      onStdout: (b) => {
        bytes += b.length;
      },
      onStderr: () => {},
    });
    expect(outcome).toMatchObject({ kind: 'ran', result: { exitCode: 0 } });
    expect(bytes).toBe(100_000_000);
  }, 120_000);

  it.each([
    ['an image', { image: 'alpine:latest' }],
    ['a mount', { mounts: [{ source: '/', target: '/host' }] }],
    ['a privileged flag', { privileged: true }],
    ['a user', { user: '0' }],
    ['a network', { network: 'host' }],
  ])('refuses a request carrying %s, and creates nothing', async (_what, extra) => {
    const frames = await raw(config.socket, `${JSON.stringify({ ...req('id -u'), ...extra })}\n`);
    expect(frames).toHaveLength(1);
    expect(frames[0]?.type).toBe(FRAME.error);
    expect(frames[0]?.payload).toMatch(/unknown field/);
    expect(labelled(`${OWNER_LABEL}=${config.socket}`)).toEqual([]);
  });

  it.each([
    ['/', 'not inside'],
    ['/etc', 'not inside'],
    [join(root, '..'), 'not inside'],
    [join(root, 'missing'), 'does not exist'],
  ])('refuses the workspace %s', async (workspace, why) => {
    const r = await run(client, { ...req('id -u'), workspace });
    expect(r.outcome.kind).toBe('refused');
    expect(JSON.stringify(r.outcome)).toContain(why);
  });

  it('a missing image is a clear error, never a pull', async () => {
    const other = {
      ...config,
      socket: join(dir.path, 'run2', 's.sock'),
      image: 'steward-no-such-image:latest',
    };
    const d2 = createSandboxd({ docker: new Docker(), config: other, log: createLogger('silent', []) });
    expect((await d2.start()).imageMissing).toMatch(/never pulls/);
    const r = await run(sandboxClient(other.socket), req('id -u'));
    await d2.stop();
    expect(r.outcome).toMatchObject({ kind: 'refused' });
    expect(JSON.stringify(r.outcome)).toMatch(/steward-no-such-image:latest is not on this Docker engine/);
  });

  it('the shell tool runs there, says so, and fails naming the socket when sandboxd is gone', async () => {
    const ctx = {
      signal: new AbortController().signal,
      sessionId: 's',
      workspace: ws,
      log: createLogger('silent', []),
      now: () => new Date(),
    };
    const tool = createShellTool({ sandbox: { config: { shell: 'container', configured: true }, client } });
    const out = await tool.execute({ command: 'id -u' }, ctx);
    expect(out).toMatch(/^exit 0\n--- stdout ---\n65534\n/);
    expect(out).toMatch(/ran in a sandbox container: image steward-sandbox-tiny:latest, network none/);
    const gone = createShellTool({
      sandbox: {
        config: { shell: 'host', configured: true },
        client: sandboxClient(join(dir.path, 'nope.sock')),
      },
    });
    await expect(gone.execute({ command: 'id -u' }, { ...ctx, unattended: true })).rejects.toThrow(
      /must run in the sandbox.*nope\.sock.*not run on the host/,
    );
    // chat with sandbox.shell: host still runs on the host, and says so.
    expect(await gone.execute({ command: 'echo hi' }, ctx)).toMatch(/ran on the host/);
  }, 60_000);

  it('leaves no container behind after sandboxd is SIGKILLed mid-run: the next start sweeps it', async () => {
    const socket = join(dir.path, 'run3', 's.sock');
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      STEWARD_DATA_DIR: dir.path,
      STEWARD_WORKSPACE: root,
      STEWARD_SANDBOX_SOCKET: socket,
      STEWARD_SANDBOX_IMAGE: docker?.image ?? '',
      STEWARD_LOG_LEVEL: 'info',
    };
    const start = () => {
      const child = spawn(process.execPath, [BIN, 'sandboxd'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let log = '';
      child.stdout?.on('data', (c) => {
        log += c;
      });
      child.stderr?.on('data', (c) => {
        log += c;
      });
      return { child, log: () => log };
    };
    /** Polls until `done` or 60 s have passed (docker ps alone can take seconds on a loaded machine). */
    const until = async (done: () => boolean) => {
      const deadline = Date.now() + 60_000;
      while (!done() && Date.now() < deadline) await new Promise((d) => setTimeout(d, 100));
    };
    const listening = async (p: { log(): string }) => {
      await until(() => p.log().includes('sandboxd listening'));
      expect(p.log()).toContain('sandboxd listening');
    };
    const first = start();
    await listening(first);
    const pending = run(sandboxClient(socket), { ...req('sleep 60', 90_000) });
    await until(() => labelled(`${OWNER_LABEL}=${socket}`).length > 0);
    expect(labelled(`${OWNER_LABEL}=${socket}`)).toHaveLength(1);
    first.child.kill('SIGKILL');
    const lost = await pending;
    expect(lost.outcome.kind).toBe('unreachable');
    expect(labelled(`${OWNER_LABEL}=${socket}`)).toHaveLength(1); // left behind by the crash
    const second: { child: ChildProcess; log(): string } = start();
    await listening(second);
    expect(second.log()).toMatch(/removed containers an earlier run left behind/);
    expect(labelled(`${OWNER_LABEL}=${socket}`)).toEqual([]);
    second.child.kill('SIGTERM');
    await new Promise((d) => second.child.once('close', d));
    expect(existsSync(socket)).toBe(false);
  }, 240_000);

  it('writes a file the host can read and change (group-writable, setgid folders)', async () => {
    writeFileSync(join(ws, 'host.txt'), 'from host\n');
    const r = await run(
      client,
      req('cat host.txt && echo more >> host.txt && mkdir -p made && stat -c "%a %G" made'),
    );
    expect(r.outcome).toMatchObject({ kind: 'ran', result: { exitCode: 0 } });
    expect(readFileSync(join(ws, 'host.txt'), 'utf8')).toBe('from host\nmore\n');
    expect(r.stdout).toMatch(/^from host\n27\d5? /m);
  }, 60_000);
});
