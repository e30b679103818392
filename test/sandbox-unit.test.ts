// The sandbox's pure parts: the request schema (hostile requests), the container spec, where a
// shell call runs, and the one relaxation of the chain inside a network-none container.
import { describe, expect, it } from 'vitest';
import { grantScopes, permissionChain } from '../src/permissions/chain.ts';
import { projectRunner, relaxForContainer } from '../src/permissions/container-relax.ts';
import type { GrantStore } from '../src/permissions/gate.ts';
import { safely } from '../src/permissions/judge-shell.ts';
import { containerSpec } from '../src/sandbox/container-spec.ts';
import { encodeFrame, FRAME, FrameReader, requestValidator } from '../src/sandbox/protocol.ts';
import { resolveSandbox, shellRunsIn } from '../src/sandbox/sandbox-config.ts';

const ok = { runId: 'r1', command: 'id -u', timeoutMs: 5000, workspace: '/w/s' };

describe('sandboxd request schema', () => {
  const validate = requestValidator();
  it('accepts exactly the four fields', () => {
    expect(validate(JSON.stringify(ok))).toEqual({ ok: true, request: ok });
  });
  it.each([
    [{ ...ok, image: 'alpine' }, /unknown field "image"/],
    [{ ...ok, mounts: ['/:/host'] }, /unknown field "mounts"/],
    [{ ...ok, privileged: true, user: '0' }, /unknown fields "privileged", "user"/],
    [{ ...ok, env: { A: '1' } }, /unknown field "env"/],
    [
      JSON.parse(`{"runId":"r","command":"x","timeoutMs":5000,"workspace":"/w","__proto__":{"image":"x"}}`),
      /unknown field "__proto__"/,
    ],
    [{ ...ok, workspace: 'relative/path' }, /workspace/],
    [{ ...ok, timeoutMs: 10 ** 9 }, /timeoutMs/],
    [{ ...ok, timeoutMs: 1.5 }, /timeoutMs/],
    [{ ...ok, runId: '../x' }, /runId/],
    [{ ...ok, command: '' }, /command/],
    [{ ...ok, command: 'a\0b' }, /NUL/],
    [{ runId: 'r', command: 'x', timeoutMs: 5000 }, /workspace/],
    [[ok], /request/],
  ])('refuses %j', (request, why) => {
    const parsed = validate(JSON.stringify(request));
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toMatch(why);
  });
  it('refuses text that is not JSON', () => {
    expect(validate('{"runId":')).toEqual({ ok: false, error: 'the request is not JSON' });
  });
});

describe('frames', () => {
  it('reads frames split anywhere', () => {
    const bytes = Buffer.concat([encodeFrame(FRAME.stdout, 'hello'), encodeFrame(FRAME.result, '{}')]);
    const reader = new FrameReader();
    const got = [...bytes].flatMap((b) => reader.push(Buffer.from([b])));
    expect(got.map((f) => [f.type, f.payload.toString()])).toEqual([
      [1, 'hello'],
      [3, '{}'],
    ]);
    expect(reader.pendingBytes).toBe(0);
  });
});

describe('the container spec', () => {
  const config = { ...resolveSandbox({}, '/data', '/w'), socket: '/data/s.sock' };
  const spec = containerSpec({ config, request: ok, workspace: '/w/s', gid: 1000 });
  it('takes every isolation setting from the config, none from the request', () => {
    expect(spec).toMatchObject({
      Image: 'steward-sandbox:latest',
      User: '65534:1000',
      WorkingDir: '/w/s',
      NetworkDisabled: true,
      Env: [
        'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        'HOME=/w/s',
        'LANG=C.UTF-8',
        'TERM=dumb',
      ],
      HostConfig: {
        Mounts: [{ Type: 'bind', Source: '/w/s', Target: '/w/s', ReadOnly: false }],
        ReadonlyRootfs: true,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        Privileged: false,
        PidsLimit: 128,
        Memory: 512 * 1024 * 1024,
        MemorySwap: 512 * 1024 * 1024,
        NanoCpus: 1e9,
        NetworkMode: 'none',
      },
    });
    expect(spec.HostConfig?.Binds).toBeUndefined();
    expect(spec.Cmd?.at(-1)).toBe('id -u'); // one argv element, never rebuilt
    expect(spec.Labels).toEqual({ 'steward.sandboxd': '/data/s.sock', 'steward.run': 'r1' });
  });
  it('opens a bridge only when configured', () => {
    const bridged = containerSpec({
      config: { ...config, network: 'bridge' },
      request: ok,
      workspace: '/w/s',
      gid: 1,
    });
    expect(bridged.NetworkDisabled).toBe(false);
    expect(bridged.HostConfig?.NetworkMode).toBe('bridge');
  });
});

describe('where a shell call runs', () => {
  it.each([
    [undefined, false, 'host'],
    [undefined, true, 'host'],
    [{ shell: 'host', configured: false }, true, 'host'],
    [{ shell: 'host', configured: true }, false, 'host'],
    [{ shell: 'host', configured: true }, true, 'container'],
    [{ shell: 'container', configured: true }, false, 'container'],
  ] as const)('%j unattended=%s → %s', (sandbox, unattended, where) => {
    expect(shellRunsIn(sandbox, unattended)).toBe(where);
  });
});

describe('project-code runners', () => {
  it.each([
    ['npm test', { program: 'npm', subcommand: 'test' }],
    ['npm run build', { program: 'npm', subcommand: 'run build' }],
    ['npm run lint -- --fix', { program: 'npm', subcommand: 'run lint' }],
    ['pytest -q tests/test_a.py', { program: 'pytest', subcommand: null }],
    ['make test', { program: 'make', subcommand: 'test' }],
    ['node x.js', { program: 'node', subcommand: 'x.js' }],
    ['node scripts/gen.mjs --out a.txt', { program: 'node', subcommand: 'scripts/gen.mjs' }],
    ['python3 tool.py', { program: 'python3', subcommand: 'tool.py' }],
    ['python3.11 report.py --week 3', { program: 'python3.11', subcommand: 'report.py' }],
    ['cargo test', { program: 'cargo', subcommand: 'test' }],
  ])('%s is %j', (command, scope) => {
    expect(projectRunner(command.split(' '))).toEqual(scope);
  });
  it.each([
    'python3 -c print(1)',
    'node -e 1',
    'python3 -m http.server',
    'python3 /etc/x.py',
    'python3 ../x.py',
    'python3 notes.txt',
    'node --require ./x.js y.js',
    'make -f other.mk test',
    'make -C /etc test',
    'make a b',
    'npm install',
    'npm publish',
    'npm run',
    'npm test --prefix /',
    'pytest /abs/path',
    'bash x.sh',
    'sh -c ls',
    'perl x.pl',
  ])('%s is not one', (command) => {
    expect(projectRunner(command.split(' '))).toBeUndefined();
  });
});

describe('relaxForContainer', () => {
  const relax = (command: string) => {
    const { verdict, analysis } = safely(command, '/w');
    return relaxForContainer({
      verdict,
      command,
      segments: analysis?.classification.segments ?? [],
      otherScopes: grantScopes,
    });
  };
  it.each([
    ['python3 report.py', 'python3', 'report.py'],
    ['npm test', 'npm', 'test'],
    ['make test', 'make', 'test'],
    ['node x.js', 'node', 'x.js'],
    ['pytest', 'pytest', null],
  ])('%s asks at 2 with a runner-keyed grant', (command, program, subcommand) => {
    expect(relax(command)).toMatchObject({
      verdict: 'ask',
      score: 2,
      canonical: command,
      grant: { kind: 'shell', scopes: [{ scope: { program, subcommand }, score: 2 }] },
    });
  });
  it.each([
    'rm -rf data',
    'npm test && rm -rf data',
    'python3 report.py; rm -rf .',
    'python3 report.py > notes.md',
    'FOO=1 python3 report.py',
    'python3 $SCRIPT',
    'python3 "$(echo x).py"',
    'python3 r*.py',
    'python3 -c "import os"',
    'find . -delete',
    'sh -c "python3 x.py"',
  ])('%s is not relaxed', (command) => {
    const relaxed = relax(command);
    expect(relaxed === undefined || relaxed.score === 3).toBe(true);
  });
  it('keeps a read-only neighbour grantable by its own scope', () => {
    expect(relax('ls && python3 report.py')).toMatchObject({ score: 2, grant: { kind: 'shell' } });
  });
});

describe('the chain in a container', () => {
  const noGrants: GrantStore = {
    covers: async () => false,
    add: async () => {},
    list: async () => [],
    revoke: async () => 0,
  };
  const call = (command: string, extra: object = {}) => ({
    sessionId: 's',
    tool: 'shell',
    args: { command },
    ...extra,
  });
  it('relaxes only in a network-none container', async () => {
    const none = permissionChain({ workspace: '/w', grants: noGrants, sandboxNetwork: 'none' });
    const bridge = permissionChain({ workspace: '/w', grants: noGrants, sandboxNetwork: 'bridge' });
    expect((await none.judge(call('python3 report.py', { runsIn: 'container' }))).score).toBe(2);
    expect((await none.judge(call('python3 report.py', { runsIn: 'host' }))).score).toBe(3);
    expect((await none.judge(call('python3 report.py'))).score).toBe(3);
    expect((await bridge.judge(call('python3 report.py', { runsIn: 'container' }))).score).toBe(3);
  });
  it('keeps the policy guard and deletes as they were', async () => {
    const none = permissionChain({ workspace: '/w', grants: noGrants, sandboxNetwork: 'none' });
    const c = { runsIn: 'container', unattended: true };
    expect(await none.judge(call('python3 /etc/shadow.py', c))).toMatchObject({
      verdict: 'deny',
      layer: 'policy',
    });
    expect(await none.judge(call('cat ~/.ssh/id_rsa && python3 x.py', c))).toMatchObject({ verdict: 'deny' });
    expect(await none.judge(call('rm -rf data', c))).toMatchObject({ verdict: 'ask', score: 3 });
  });
  it('unattended: runs a relaxed runner only while the session is untainted', async () => {
    const none = permissionChain({ workspace: '/w', grants: noGrants, sandboxNetwork: 'none' });
    const base = { runsIn: 'container', unattended: true };
    expect(await none.judge(call('python3 report.py', base))).toMatchObject({ verdict: 'allow', score: 2 });
    const tainted = { ...base, egress: { tainted: true, knownHosts: new Set<string>() } };
    expect(await none.judge(call('python3 report.py', tainted))).toMatchObject({ verdict: 'ask', score: 2 });
  });
  it('a session grant on the runner and script covers it', async () => {
    const granted: GrantStore = {
      ...noGrants,
      covers: async (_s, tool, score, scope) =>
        tool === 'shell' && score <= 2 && scope?.program === 'python3' && scope.subcommand === 'report.py',
    };
    const none = permissionChain({ workspace: '/w', grants: granted, sandboxNetwork: 'none' });
    expect(await none.judge(call('python3 report.py', { runsIn: 'container' }))).toMatchObject({
      verdict: 'allow',
      layer: 'grant',
    });
    expect(await none.judge(call('python3 other.py', { runsIn: 'container' }))).toMatchObject({
      verdict: 'ask',
    });
  });
});
