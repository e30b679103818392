// The permission chain as the loop uses it, with the real shell tool in a real workspace.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OutboundEvent, PermissionPrompt } from '../src/channel/port.ts';
import { createAssistant } from '../src/core/assistant.ts';
import { openAiCompatible } from '../src/gateway/openai-compatible.ts';
import { createLogger } from '../src/log.ts';
import { permissionChain } from '../src/permissions/chain.ts';
import type { Db } from '../src/store/db.ts';
import { sessionGrants } from '../src/store/grants.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/open-db.ts';
import { shellTool } from '../src/tools/builtin/shell.ts';
import { writeFileTool } from '../src/tools/builtin/write-file.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import { decideAndWait } from './support/decide.ts';
import { reply, type ScriptedModel, type ScriptStep, startScriptedModel } from './support/scripted-model.ts';
import { tempDir } from './support/services.ts';

const shell = (command: string): ScriptStep => ({
  chunks: [],
  toolCalls: [{ name: 'shell', argumentChunks: [JSON.stringify({ command })] }],
});

describe('the permission chain in the loop', () => {
  let dir: ReturnType<typeof tempDir>;
  let workspace: string;
  let db: Db;
  let model: ScriptedModel;
  let events: OutboundEvent[];
  const sink = (e: OutboundEvent) => {
    events.push(e);
  };

  beforeEach(async () => {
    dir = tempDir();
    workspace = join(dir.path, 'ws');
    mkdirSync(workspace);
    db = await openPglite(join(dir.path, 'pg'));
    await migrate(db);
    events = [];
  });
  afterEach(async () => {
    await model.close();
    await db.close();
    dir.remove();
  });

  const build = () => {
    const grants = sessionGrants(db, () => new Date());
    return createAssistant({
      db,
      log: createLogger('silent', []),
      owners: { test: 'owner' },
      workspace,
      route: {
        name: 'default',
        entries: [
          { providerName: 'default', provider: openAiCompatible({ baseUrl: model.baseUrl }), model: 'm' },
        ],
      },
      tools: createToolRegistry([shellTool, writeFileTool]),
      grants,
      gate: permissionChain({ workspace, grants }),
    });
  };
  const say = (a: ReturnType<typeof build>, text: string) =>
    a.handle({ channel: 'test', room: 'r', senderId: 'owner', text }, sink);
  const prompts = () =>
    events.flatMap((e) => (e.type === 'permission_prompt' ? [e.prompt] : [])) as PermissionPrompt[];
  const decide = (a: ReturnType<typeof build>, decision: 'once' | 'session' | 'deny') =>
    decideAndWait(
      a,
      { requestId: prompts().at(-1)?.requestId as string, decision, channel: 'test', senderId: 'owner' },
      sink,
    );
  const lastTool = (i: number) =>
    ((model.requests[i]?.messages ?? []) as Array<{ role: string; content: string }>)
      .filter((m) => m.role === 'tool')
      .at(-1)?.content ?? '';

  it('runs a read-only command without asking, and refuses a key file outright', async () => {
    model = await startScriptedModel([
      shell('echo hello && ls'),
      reply('listed'),
      shell('cat .env'),
      reply('refused'),
    ]);
    const a = build();
    await say(a, 'list');
    expect(prompts()).toEqual([]);
    expect(lastTool(1)).toMatch(/^exit 0\n--- stdout ---\nhello/);
    await say(a, 'show secrets');
    expect(prompts()).toEqual([]);
    expect(lastTool(3)).toMatch(/^Refused by policy \(policy\)/);
    const audit = await db.query('select layer, verdict, score, outcome from audit_log order by id');
    expect(audit.rows).toEqual([
      { layer: 'classifier', verdict: 'allow', score: 0, outcome: 'ok' },
      { layer: 'policy', verdict: 'deny', score: 3, outcome: 'not_run' },
    ]);
  });

  it('asks for rm with the exact command; "session" never covers score 3', async () => {
    model = await startScriptedModel([
      shell('rm notes.txt'),
      reply('removed'),
      shell('rm other.txt'),
      reply('asked'),
    ]);
    const a = build();
    await say(a, 'make a note');
    writeFileSync(join(workspace, 'notes.txt'), 'x');
    const [prompt] = prompts();
    expect(prompt).toMatchObject({ tool: 'shell', args: 'rm notes.txt', score: 3, level: 'destructive' });
    await decide(a, 'session');
    expect(existsSync(join(workspace, 'notes.txt'))).toBe(false);
    await say(a, 'remove the other');
    expect(prompts()).toHaveLength(2);
    expect(prompts()[1]).toMatchObject({ args: 'rm other.txt', score: 3 });
  });

  it('"session" on a moderate command covers the same program later, not a destructive one', async () => {
    model = await startScriptedModel([
      shell('mkdir build'),
      reply('made'),
      shell('mkdir dist'),
      reply('made again'),
      shell('rm -r dist'),
    ]);
    const a = build();
    await say(a, 'make build');
    expect(prompts()[0]?.score).toBeGreaterThan(0);
    expect(prompts()[0]?.score).toBeLessThan(3);
    await decide(a, 'session');
    await say(a, 'make dist');
    expect(prompts()).toHaveLength(1);
    expect(existsSync(join(workspace, 'dist'))).toBe(true);
    await say(a, 'remove dist');
    expect(prompts()).toHaveLength(2);
    expect(existsSync(join(workspace, 'dist'))).toBe(true);
  });

  it('write_file to .env is refused by the policy guard before the exempt list', async () => {
    model = await startScriptedModel([
      {
        chunks: [],
        toolCalls: [{ name: 'write_file', argumentChunks: ['{"path":".env","content":"X=1"}'] }],
      },
      reply('no'),
    ]);
    await say(build(), 'write env');
    expect(lastTool(1)).toMatch(/^Refused by policy/);
    expect(existsSync(join(workspace, '.env'))).toBe(false);
  });
});
