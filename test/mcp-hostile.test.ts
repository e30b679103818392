// Our own hostile MCP server behind the real chain, fence and offload: forged markers, a 200 KB
// result, a hang, a crash, errors in its own words, and tools named like built-ins. None of them
// gains an exemption or speaks as steward.
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MCP_LIMITS } from '../src/limits.ts';
import { createLogger } from '../src/log.ts';
import type { McpServerConfig } from '../src/mcp/config.ts';
import { mcpManager } from '../src/mcp/manager.ts';
import { FENCE_CLOSE, FENCE_OPEN_PREFIX, MARKER_REPLACEMENT } from '../src/trust/fence.ts';
import { call, HOSTILE, type McpRig, mcpRig, offered, toolMessages } from './support/mcp-rig.ts';
import { reply } from './support/scripted-model.ts';

const node = process.execPath;
let rig: McpRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** Exactly one real fence pair, and no forged marker left inside it. */
function expectOneFence(text: string | undefined): void {
  expect(text?.split(FENCE_OPEN_PREFIX)).toHaveLength(2);
  expect(text?.split(FENCE_CLOSE)).toHaveLength(2);
  expect(text).toContain(MARKER_REPLACEMENT);
}

const ALLOWED = ['forge', 'big', 'fail', 'rpc_error', 'env', 'hang', 'crash', 'echo'];

describe('a hostile MCP server', () => {
  it('is fenced, offloaded and timed out like any untrusted tool; its env is only what was named', async () => {
    const steps = [
      call('bad__forge', {}),
      call('bad__fail', {}),
      call('bad__rpc_error', {}),
      call('bad__big', {}),
      call('bad__hang', {}),
      call('bad__env', {}),
      call('bad__image', {}),
      call('bad__echo', { message: 'this message is far too long for the schema' }),
      reply('done'),
    ];
    rig = await mcpRig({
      servers: {
        bad: {
          command: node,
          args: [HOSTILE],
          env: ['MCP_TEST_TOKEN'],
          allow: ALLOWED,
          deny: ['image'],
          index: false,
        },
      },
      // Every call of the turn gets this long (the 200 KB one too); only the hang should need it.
      file: { loop: { tool_timeout_s: 5 } },
      env: { MCP_TEST_TOKEN: 'token-for-the-test' },
      script: steps,
    });
    await rig.say('go');
    const results = toolMessages(rig.model.requests.at(-1));
    const [forge, fail, rpc, big, hang, env, image, echo] = results;
    expectOneFence(forge);
    expectOneFence(fail);
    expect(fail).toContain('bad__fail reported an error');
    expectOneFence(rpc);
    expect(rpc).toContain('The server answered with an error');
    // 200 KB went to the store: the model got a fenced digest with the retrieve_output call.
    expect(big?.length).toBeLessThan(8192);
    expect(big).toContain('retrieve_output');
    expect(big).toContain(FENCE_OPEN_PREFIX);
    expect(
      rig.out.some((e) => e.type === 'output_offloaded' && e.tool === 'bad__big' && e.bytes > 190_000),
    ).toBe(true);
    expect(hang).toBe('bad__hang did not finish within 5 s and was stopped.');
    expect(env).toContain('HOME,MCP_TEST_TOKEN,PATH');
    expect(env).not.toContain('STEWARD');
    // Denied: never offered, and a call to it is an error result.
    expect(offered(rig.model.requests[0])).not.toContain('bad__image');
    expect(image).toContain('There is no tool named "bad__image"');
    // The server's schema, through the constraint layer, before any call.
    expect(echo).toContain('do not match its schema');

    const events = (await rig.events()).map((e) => e.data);
    for (const tool of ['bad__forge', 'bad__fail', 'bad__rpc_error', 'bad__big', 'bad__hang', 'bad__env']) {
      expect(events.some((d) => d.kind === 'tool_started' && d.tool === tool)).toBe(true);
      expect(events.some((d) => d.kind === 'tool_result' && d.tool === tool)).toBe(true);
    }
    // A server's error is logged as an error, and fenced as its words.
    for (const tool of ['bad__fail', 'bad__rpc_error']) {
      expect(events.find((d) => d.kind === 'tool_result' && d.tool === tool)).toMatchObject({
        isError: true,
        untrusted: true,
      });
    }
    const audit = await rig.db.query<{ tool: string; layer: string; outcome: string }>(
      'select tool, layer, outcome from audit_log',
    );
    expect(
      audit.rows.filter((r) => r.tool === 'bad__fail' || r.tool === 'bad__rpc_error').map((r) => r.outcome),
    ).toEqual(['error', 'error']);
    expect(audit.rows).toHaveLength(steps.length - 1);
    expect(audit.rows.filter((r) => r.layer === 'exempt')).toEqual([]);
  }, 60_000);

  it('gives no exemption to tools named like built-ins: each asks, naming the server', async () => {
    rig = await mcpRig({
      servers: { bad: { command: node, args: [HOSTILE], index: false } },
      script: [
        {
          chunks: [],
          toolCalls: ['load_tool', 'retrieve_output', 'x_load_tool', 'shell'].map((name, i) => ({
            id: `c${i}`,
            name: `bad__${name}`,
            argumentChunks: ['{}'],
          })),
        },
        reply('never'),
      ],
    });
    await rig.say('go');
    const prompts = rig.prompts();
    expect(prompts.map((p) => p.tool).sort()).toEqual([
      'bad__load_tool',
      'bad__retrieve_output',
      'bad__shell',
      'bad__x_load_tool',
    ]);
    for (const p of prompts) {
      expect(p.layer).toBe('ask');
      expect(p.rationale).toContain('of the MCP server bad');
      expect(p.rationale).toContain('grants nothing');
    }
    const offeredNames = offered(rig.model.requests[0]);
    expect(offeredNames.filter((n) => n === 'load_tool' || n === 'shell' || n === 'retrieve_output')).toEqual(
      ['retrieve_output', 'shell', 'load_tool'],
    );
  }, 60_000);

  it('reports a crash once, restarts the server, and its tools work again', async () => {
    rig = await mcpRig({
      servers: { bad: { command: node, args: [HOSTILE], allow: ALLOWED, index: false } },
      script: [
        call('bad__crash', {}),
        reply('it crashed'),
        call('bad__echo', { message: 'back' }),
        reply('ok'),
      ],
    });
    await rig.say('crash it');
    const crashed = toolMessages(rig.model.requests[1]).at(-1);
    expect(crashed).toContain('bad__crash failed: the MCP server bad failed during the call');
    const r = rig;
    await waitFor(() => r.built.mcp.status()[0]?.state === 'connected' && r.reports.length > 0);
    expect(rig.reports).toHaveLength(1);
    expect(rig.reports[0]).toMatch(/^mcp: server bad crashed: .*restarting it with backoff/);
    await rig.say('echo back');
    expect(toolMessages(rig.model.requests[3]).at(-1)).toContain('echo: back');
  }, 60_000);
});

async function waitFor(check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('servers that fail to start', () => {
  const base = {
    trusted: false,
    sensitive: false,
    allow: [],
    deny: [],
    index: 'auto' as const,
    where: 'test',
  };
  const stdio = (name: string, args: string[], command = node): McpServerConfig => ({
    ...base,
    name,
    transport: { kind: 'stdio', command, args, env: {} },
  });

  it('reports a hang and a missing command once each, retries with backoff, and keeps the others', async () => {
    const reports: string[] = [];
    const manager = mcpManager(
      [
        stdio('slow', [HOSTILE, 'hang-start']),
        stdio('gone', [], '/nonexistent/mcp-server'),
        stdio('good', [HOSTILE]),
      ],
      {
        limits: {
          ...DEFAULT_MCP_LIMITS,
          // Room for the good server's node to start on a loaded machine; the hang still runs out.
          connectMs: 10_000,
          readyWaitMs: 20_000,
          restartBaseMs: 100,
          killGraceMs: 200,
        },
        log: createLogger('silent', []),
        report: (line) => reports.push(line),
        ownEnv: process.env,
        cwd: process.cwd(),
        version: 'test',
        redact: (t) => t,
        builtins: new Set(),
        toolTimeoutMs: 1000,
      },
    );
    manager.start();
    await manager.ready();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    try {
      const byName = Object.fromEntries(manager.status().map((s) => [s.name, s]));
      expect([byName.good?.state, byName.good?.lastError]).toEqual(['connected', undefined]);
      expect(byName.good?.tools.length).toBeGreaterThan(8);
      expect(byName.slow?.state).toBe('restarting');
      expect(byName.gone?.state).toBe('restarting');
      expect(reports.filter((l) => l.includes('server slow'))).toEqual([
        expect.stringMatching(/server slow did not start: initialize did not finish within 10 s/),
      ]);
      expect(reports.filter((l) => l.includes('server gone'))).toEqual([
        expect.stringMatching(
          /server gone did not start: the command \(or the folder it runs in\) was not found/,
        ),
      ]);
    } finally {
      await manager.stop();
    }
  }, 60_000);
});
