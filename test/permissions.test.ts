// The permission chain as the loop uses it: order of the layers, narrow session grants on a real
// PGlite store (expiry, revocation), and properties over random shell-ish input.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { describeGrant, grantScopes, permissionChain } from '../src/permissions/chain.ts';
import type { GrantStore, PermissionCall, PermissionGate } from '../src/permissions/gate.ts';
import { analyzeShell, judgeShell } from '../src/permissions/judge-shell.ts';
import type { Db } from '../src/store/db.ts';
import { DEFAULT_GRANT_TTL_MS, sessionGrants } from '../src/store/grants.ts';
import { migrate } from '../src/store/migrate.ts';
import { embeddedBackend } from './support/services.ts';

const WS = '/srv/steward/workspace';
const HOUR = 60 * 60 * 1000;

const shell = (sessionId: string, command: string): PermissionCall => ({
  sessionId,
  tool: 'shell',
  args: { command },
});

/** Grants nothing, or everything: the chain must never lean on a store to refuse score 3. */
const storeThatSays = (answer: boolean): GrantStore => ({
  covers: async () => answer,
  add: async () => {},
  list: async () => [],
  revoke: async () => 0,
});

describe('chain order', () => {
  const chain = permissionChain({ workspace: WS, grants: storeThatSays(false) });
  const call = (tool: string, args: Record<string, unknown>) => chain.judge({ sessionId: 's', tool, args });

  it('denies by policy before anything can allow, exempt tools included', async () => {
    expect(await call('write_file', { path: '.env', content: 'x' })).toMatchObject({
      verdict: 'deny',
      layer: 'policy',
    });
    expect(await call('write_file', { path: '../out.txt', content: 'x' })).toMatchObject({ verdict: 'deny' });
    expect(await call('load_skill', { path: '../../etc' })).toMatchObject({
      verdict: 'deny',
      layer: 'policy',
    });
  });

  it('lets exempt tools through by exact name only', async () => {
    expect(await call('write_file', { path: 'notes/a.md', content: 'x' })).toMatchObject({
      verdict: 'allow',
      layer: 'exempt',
      score: 0,
    });
    expect(await call('current_time', {})).toMatchObject({ verdict: 'allow', layer: 'exempt' });
    for (const name of [
      'exfiltrate_write_file',
      'write_file_x',
      'Write_File',
      'web_fetch ',
      'x_load_skill',
    ]) {
      expect(await call(name, {})).toMatchObject({ verdict: 'ask', layer: 'ask', score: 2 });
    }
  });

  it('honours a custom exempt list', async () => {
    const custom = permissionChain({
      workspace: WS,
      grants: storeThatSays(false),
      exempt: new Set(['lookup']),
    });
    expect(await custom.judge({ sessionId: 's', tool: 'lookup', args: {} })).toMatchObject({
      verdict: 'allow',
    });
    expect(await custom.judge({ sessionId: 's', tool: 'calculate', args: {} })).toMatchObject({
      verdict: 'ask',
    });
  });

  it('judges shell with the classifier and keeps the canonical command', async () => {
    const command = 'git status  &&  ls';
    expect(await chain.judge(shell('s', command))).toEqual({
      verdict: 'allow',
      layer: 'classifier',
      score: 0,
      rationale: 'read-only: git, ls',
      canonical: command,
    });
    expect(await chain.judge(shell('s', 'rm -rf x'))).toMatchObject({
      verdict: 'ask',
      layer: 'classifier',
      score: 3,
    });
    expect(await chain.judge(shell('s', 'mv a b'))).toMatchObject({ verdict: 'ask', layer: 'ask', score: 2 });
  });

  it('gives the same verdict as judgeShell when no grant applies', async () => {
    for (const command of ['ls', 'cat .env', 'rm x', 'mkdir a', 'echo "$(id)"', '', 'x'.repeat(70_000)]) {
      expect(await chain.judge(shell('s', command))).toMatchObject(judgeShell(command, WS));
    }
  });

  it('denies a shell call without a command string', async () => {
    expect(await chain.judge({ sessionId: 's', tool: 'shell', args: { command: 42 } })).toMatchObject({
      verdict: 'deny',
      layer: 'policy',
    });
  });

  it('never lets a grant cover score 3 or a policy denial', async () => {
    const generous = permissionChain({ workspace: WS, grants: storeThatSays(true) });
    expect(await generous.judge(shell('s', 'rm -rf x'))).toMatchObject({ verdict: 'ask', score: 3 });
    expect(await generous.judge(shell('s', 'cat .env'))).toMatchObject({ verdict: 'deny' });
    expect(await generous.judge(shell('s', 'mv a b'))).toMatchObject({ verdict: 'allow', layer: 'grant' });
    expect(await generous.judge(shell('s', 'env'))).toMatchObject({ verdict: 'ask' });
  });
});

describe('grant scopes', () => {
  const scopes = (command: string) => grantScopes(analyzeShell(command, WS).classification.segments);

  it('name the program and subcommand, never a shell, an interpreter, env, sudo or git as a whole', () => {
    expect(scopes('git add a')).toEqual([{ program: 'git', subcommand: 'add', target: null }]);
    expect(scopes('git stash pop')).toEqual([{ program: 'git', subcommand: 'stash pop', target: null }]);
    expect(scopes('timeout 5 mv a b')).toEqual([{ program: 'mv', subcommand: null, target: null }]);
    expect(scopes('mkdir a && mv a b && ls')).toEqual([
      { program: 'mkdir', subcommand: null, target: null },
      { program: 'mv', subcommand: null, target: null },
    ]);
    expect(scopes('find . -exec mv {} x \\;')).toEqual([
      { program: 'find', subcommand: '-exec mv', target: null },
    ]);
    for (const command of [
      'env',
      'sh -c ls',
      'python3 x.py',
      'sudo ls',
      'rm x',
      'echo hi >> log',
      'mkdir a; rm b',
    ]) {
      expect(scopes(command)).toBeUndefined();
    }
  });
});

describe('session grants on PGlite', () => {
  let db: Db;
  let cleanup: () => Promise<void>;
  let clock: Date;
  let store: GrantStore;
  let chain: PermissionGate;
  let session: string;
  const now = () => clock;

  const newSession = async () => {
    const id = randomUUID();
    await db.query("insert into sessions (id, channel, room) values ($1, 'test', $2)", [id, id]);
    return id;
  };
  /** What the owner's "allow for this session" does: judge, then grant. */
  const approve = async (call: PermissionCall) => chain.grant(call, (await chain.judge(call)).grant);

  beforeAll(async () => {
    ({ db, cleanup } = await embeddedBackend.open());
    await migrate(db);
  });
  afterAll(async () => cleanup());
  beforeEach(async () => {
    clock = new Date('2030-01-01T08:00:00Z');
    store = sessionGrants(db, now);
    chain = permissionChain({ workspace: WS, grants: store });
    session = await newSession();
  });

  it('covers a later call of the same program and subcommand at or below the approved score', async () => {
    await approve(shell(session, 'git add a.txt'));
    expect(await chain.judge(shell(session, 'git add b.txt'))).toMatchObject({
      verdict: 'allow',
      layer: 'grant',
      score: 1,
      rationale: 'you allowed git add for this session',
    });
    expect(await chain.judge(shell(session, 'git commit -m x'))).toMatchObject({ verdict: 'ask' });
    expect(await chain.judge(shell(session, 'git push'))).toMatchObject({ verdict: 'ask', score: 3 });

    await approve(shell(session, 'mv a b'));
    expect(await chain.judge(shell(session, 'mv c d'))).toMatchObject({ verdict: 'allow', layer: 'grant' });
    expect(await chain.judge(shell(session, 'timeout 9 mv e f'))).toMatchObject({ verdict: 'allow' });
    expect(await chain.judge(shell(session, 'mv c d && cp d e'))).toMatchObject({ verdict: 'ask' });
    expect(await chain.judge(shell(session, 'mv c d; rm -rf x'))).toMatchObject({ verdict: 'ask', score: 3 });
    expect(await chain.judge(shell(session, 'mv .env x'))).toMatchObject({
      verdict: 'deny',
      layer: 'policy',
    });
  });

  it('never covers score 3, even of a granted program', async () => {
    await approve(shell(session, 'curl https://example.com'));
    // The grant is for that host: another page there runs, another host asks again.
    expect(await chain.judge(shell(session, 'curl https://example.com/b'))).toMatchObject({
      verdict: 'allow',
    });
    expect(await chain.judge(shell(session, 'curl https://example.org'))).toMatchObject({ verdict: 'ask' });
    expect(await chain.judge(shell(session, 'curl -o page.html https://example.com'))).toMatchObject({
      verdict: 'ask',
      score: 3,
    });
    await approve(shell(session, 'rm -rf data'));
    await approve(shell(session, 'sh -c "ls"'));
    expect(await store.list(session)).toHaveLength(1);
    expect(await chain.judge(shell(session, 'rm -rf data'))).toMatchObject({ verdict: 'ask', score: 3 });
    expect(await store.covers(session, 'shell', 3, { program: 'rm', subcommand: null })).toBe(false);
  });

  it('stores nothing for a command with an ungrantable part', async () => {
    await approve(shell(session, 'mkdir a && env'));
    await approve(shell(session, 'echo x >> log'));
    expect(await store.list(session)).toEqual([]);
  });

  it('stores one narrow row per program, renewed rather than repeated', async () => {
    await approve(shell(session, 'mkdir a && mv a b'));
    await approve(shell(session, 'mkdir c'));
    const grants = await store.list(session);
    expect(grants.map((g) => [g.tool, g.program, g.subcommand, g.maxScore])).toEqual([
      ['shell', 'mkdir', null, 1],
      ['shell', 'mv', null, 2],
    ]);
    expect(grants[0]?.expiresAt.getTime()).toBe(clock.getTime() + DEFAULT_GRANT_TTL_MS);
    expect(describeGrant(grants[0] as never)).toMatch(
      /^[0-9a-f]{8} {2}shell: mkdir \(score ≤ 1\) until 20:00 UTC$/,
    );
  });

  it('keeps grants to their session', async () => {
    await approve(shell(session, 'mkdir a'));
    const other = await newSession();
    expect(await chain.judge(shell(other, 'mkdir b'))).toMatchObject({ verdict: 'ask' });
  });

  it('grants other non-exempt tools by name, and never shell as a whole', async () => {
    const call = { sessionId: session, tool: 'send_mail', args: { to: 'a@example.com' } };
    expect(await chain.judge(call)).toMatchObject({ verdict: 'ask', layer: 'ask', score: 2 });
    await approve(call);
    expect(await chain.judge(call)).toMatchObject({ verdict: 'allow', layer: 'grant' });
    await store.add(session, 'shell', 2);
    expect(await chain.judge(shell(session, 'mv a b'))).toMatchObject({ verdict: 'ask' });
  });

  it('expires after 12 hours by default, or the configured time', async () => {
    await approve(shell(session, 'mkdir a'));
    clock = new Date(clock.getTime() + 12 * HOUR - 1);
    expect(await chain.judge(shell(session, 'mkdir b'))).toMatchObject({ verdict: 'allow' });
    clock = new Date(clock.getTime() + 1);
    expect(await chain.judge(shell(session, 'mkdir b'))).toMatchObject({ verdict: 'ask' });
    expect(await store.list(session)).toEqual([]);

    const short = permissionChain({ workspace: WS, grants: sessionGrants(db, now, 60_000) });
    await short.grant(shell(session, 'touch x'), (await short.judge(shell(session, 'touch x'))).grant);
    expect(await short.judge(shell(session, 'touch y'))).toMatchObject({ verdict: 'allow' });
    clock = new Date(clock.getTime() + 60_000);
    expect(await short.judge(shell(session, 'touch y'))).toMatchObject({ verdict: 'ask' });
  });

  it('revokes one grant by id or prefix, or all of them, and only in its own session', async () => {
    await approve(shell(session, 'mkdir a'));
    await approve(shell(session, 'touch a'));
    await approve(shell(session, 'kill 1'));
    const byProgram = new Map((await store.list(session)).map((g) => [g.program, g]));
    const first = byProgram.get('mkdir');
    const second = byProgram.get('touch');
    const other = await newSession();
    expect(await store.revoke(other, first?.id as string)).toBe(0);
    expect(await store.revoke(session, 'not-an-id')).toBe(0);
    expect(await store.revoke(session, first?.id as string)).toBe(1);
    expect(await store.revoke(session, first?.id as string)).toBe(0);
    expect(await chain.judge(shell(session, 'mkdir b'))).toMatchObject({ verdict: 'ask' });
    expect(await store.revoke(session, String(second?.id).slice(0, 8))).toBe(1);
    expect(await store.list(session)).toHaveLength(1);
    expect(await store.revoke(session, 'all')).toBe(1);
    expect(await store.list(session)).toEqual([]);
    expect(await chain.judge(shell(session, 'kill 2'))).toMatchObject({ verdict: 'ask' });
  });
});

// ---- properties ----

const SHELLISH = fc.constantFrom(
  ...'abcdefrmlsxyz019 -_./~*?[]{},;&|<>()$`\'"\\#=@:!\n\t%^+'.split(''),
  'rm',
  ' rm ',
  '$(',
  '${',
  '<<',
  "$'",
  '&&',
  '||',
  '\u0000',
  '\u202e',
  'é',
);

describe('properties', () => {
  it('never throws on random shell-ish strings, and always gives a well-formed verdict', async () => {
    const chain = permissionChain({ workspace: WS, grants: storeThatSays(false) });
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: SHELLISH, maxLength: 60 }), async (command) => {
        const v = await chain.judge(shell('s', command));
        expect(['allow', 'ask', 'deny']).toContain(v.verdict);
        expect([0, 1, 2, 3]).toContain(v.score);
        expect(v.rationale).not.toBe('');
        expect([...v.rationale].some((c) => c < ' ' || c === '\u007f')).toBe(false);
        expect(v.canonical).toBe(command);
      }),
      { numRuns: 3000 },
    );
  });

  const word = fc.stringMatching(/^[a-z0-9._\-/]{1,8}$/);
  const harmless = fc.constantFrom(
    'ls',
    'pwd',
    'echo hi',
    'cat a.txt',
    'git status',
    'true',
    'x=1',
    "grep -r 'a b' src",
  );
  const separator = fc.constantFrom(';', ' ; ', '&&', ' || ', ' | ', ' & ', '\n', ' |& ', ';\n');
  const rm = fc.constantFrom('rm', '\\rm', "'rm'", '"rm"', 'r\\m', "'r'm", '/bin/rm', '/usr/bin/rm', 'r""m');
  const wrapper = fc.constantFrom(
    '',
    'timeout 5 ',
    'env ',
    'env -i ',
    'nice -n 1 ',
    'nohup ',
    'command ',
    'builtin ',
    'time ',
    'stdbuf -oL ',
    'xargs ',
    'sudo ',
    'busybox ',
    'X=1 ',
    '! ',
    'timeout -s KILL 5 ',
    'env -u HOME ',
    'nice -5 ',
    'xargs -0 -n 1 ',
    'ionice -c 3 ',
    'setsid ',
    '/usr/bin/env ',
    'command -p ',
  );
  const shape = fc.constantFrom(
    '%',
    '( %; )',
    '{ %; }',
    'if true; then %; fi',
    'for f in a; do %; done',
    'while false; do %; done',
    '% &',
    '% 2>&1',
    'true && %',
    'x=$(%)',
    'echo "$(%)"',
    'echo `%`',
    'cat <(%)',
    'find . -exec % {} +',
    'ls | %',
  );

  it('never allows a command with rm as a command word, even with every grant given', async () => {
    const chain = permissionChain({ workspace: WS, grants: storeThatSays(true) });
    await fc.assert(
      fc.asyncProperty(
        fc.array(harmless, { maxLength: 3 }),
        separator,
        wrapper,
        rm,
        fc.array(word, { maxLength: 3 }),
        shape,
        async (before, sep, wrap, name, args, around) => {
          const rmCommand = around.replace('%', `${wrap}${name} ${args.join(' ')}`.trim());
          const command = before.length > 0 ? `${before.join(sep)}${sep}${rmCommand}` : rmCommand;
          const v = await chain.judge(shell('s', command));
          expect(v.verdict, command).not.toBe('allow');
        },
      ),
      { numRuns: 3000 },
    );
  });
});
