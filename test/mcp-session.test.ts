// MCP tools and the session: a sensitive server pins the session (or is refused without a
// sensitive route), /tools answers in the channel, and loaded schemas survive a restart.
import { afterEach, describe, expect, it } from 'vitest';
import { call, HOSTILE, type McpRig, mcpRig, offered, toolMessages } from './support/mcp-rig.ts';
import { reply } from './support/scripted-model.ts';

const node = process.execPath;
const rigs: McpRig[] = [];
afterEach(async () => {
  // The last rig made owns the database; the others only share it.
  for (const r of rigs.splice(0).reverse()) await r.close();
});

describe('a sensitive MCP server', () => {
  it('is refused when no sensitive route exists', async () => {
    const rig = await mcpRig({
      servers: { vault: { command: node, args: [HOSTILE], sensitive: true, allow: ['echo'], index: false } },
      script: [call('vault__echo', { message: 'x' }), reply('ok')],
    });
    rigs.push(rig);
    await rig.say('go');
    expect(toolMessages(rig.model.requests[1]).at(-1)).toBe(
      'Not run: vault__echo reads private data and no sensitive_tool_route is configured. Tell the owner.',
    );
  }, 60_000);

  it('pins the session to the sensitive route from the call on', async () => {
    const rig = await mcpRig({
      servers: { vault: { command: node, args: [HOSTILE], sensitive: true, allow: ['echo'], index: false } },
      file: {
        routes: { local: [{ provider: 'default', model: 'local-model' }] },
        sensitive_tool_route: 'local',
      },
      script: [call('vault__echo', { message: 'x' }), reply('ok'), reply('still local')],
    });
    rigs.push(rig);
    await rig.say('go');
    await rig.say('and now?');
    expect(rig.model.requests.map((r) => r.model)).toEqual(['m', 'local-model', 'local-model']);
    const started = (await rig.events()).find((e) => e.data.kind === 'tool_started');
    expect(started?.data).toMatchObject({ tool: 'vault__echo', sensitive: true });
  }, 60_000);
});

describe('/tools and restarts', () => {
  it('answers /tools, and a loaded schema is still offered after a restart', async () => {
    const first = await mcpRig({
      servers: { many: { command: node, args: [HOSTILE, 'many', '12'] } },
      script: [call('load_tool', { name: 'many__action_07' }), reply('loaded')],
    });
    rigs.push(first);
    await first.say('load one');
    await first.say('/tools');
    const answer = first.out.filter((e) => e.type === 'reply').at(-1);
    expect(answer?.type === 'reply' && answer.text).toMatch(
      /MCP servers:\n {2}many {2}stdio {2}connected {2}12 tools {2}untrusted, indexed\n/,
    );
    expect(answer?.type === 'reply' && answer.text).toContain(
      'Loaded from the index in this session: many__action_07',
    );
    await first.built.mcp.stop();

    const second = await mcpRig({
      servers: { many: { command: node, args: [HOSTILE, 'many', '12'] } },
      script: [reply('here')],
      db: first.db,
    });
    rigs.push(second);
    await second.say('after the restart');
    const names = offered(second.model.requests[0]).filter((n) => n.startsWith('many__'));
    expect(names).toEqual(['many__action_07']);
  }, 60_000);
});

describe('the index bench', () => {
  it('a 40-tool server behind the index costs fewer prompt tokens per request than its eager schemas', async () => {
    const { mcpIndexBench } = await import('../bench/mcp-index.ts');
    const figures = await mcpIndexBench();
    console.info(`mcp index: ${JSON.stringify(figures)}`);
    expect(figures.eagerSchemasOffered).toBe(40);
    expect(figures.indexedSchemasOffered).toBe(0);
    expect(figures.indexedTokensPerRequest).toBeLessThan(figures.eagerTokensPerRequest);
    // One loaded schema costs about a fortieth of the eager set, not the whole of it.
    expect(figures.indexedTokensAfterLoadingOne).toBeLessThan(figures.eagerTokensPerRequest / 2);
    expect(figures.ratio).toBeGreaterThan(2);
  }, 60_000);
});
