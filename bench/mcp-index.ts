// What the index saves: a 40-tool MCP server (our many-tools test server, realistic schemas) with
// its schemas in every request, against the same server behind the index (one line per tool in
// the system prompt, plus load_tool). Tokens are the request's characters over 4 (system prompt,
// messages and tools, as the provider receives them), per request; the whole request counts, so
// the built-in tools' share is in both.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAssistant } from '../src/core/assistant.ts';
import type { ModelRequest, Provider, ProviderEvent } from '../src/gateway/types.ts';
import { DEFAULT_MCP_LIMITS } from '../src/limits.ts';
import { createLogger } from '../src/log.ts';
import type { McpServerConfig } from '../src/mcp/config.ts';
import { mcpManager } from '../src/mcp/manager.ts';
import { permissionChain } from '../src/permissions/chain.ts';
import { sessionGrants } from '../src/store/grants.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/open-db.ts';
import { builtinPureTools } from '../src/tools/builtin/index.ts';
import { createLoadToolTool } from '../src/tools/builtin/load-tool.ts';
import { createToolRegistry } from '../src/tools/registry.ts';

const SERVER = fileURLToPath(new URL('../test/support/hostile-mcp-server.ts', import.meta.url));
const TOOLS = 40;

/** Turn 1 answers at once; turn 2 loads one tool, then answers. Records every request. */
function recordingProvider(requests: ModelRequest[]): Provider {
  return {
    kind: 'in-process',
    async *stream(req): AsyncGenerator<ProviderEvent> {
      requests.push(req);
      const last = req.messages.at(-1);
      const wantsLoad = last?.role === 'user' && last.content === 'load one';
      if (wantsLoad) {
        const name = 'tracker__action_07';
        yield {
          type: 'tool_call',
          call: { id: randomUUID(), name: 'load_tool', arguments: JSON.stringify({ name }) },
        };
        yield { type: 'done', stopReason: 'tool_calls' };
        return;
      }
      yield { type: 'text_delta', text: 'ok' };
      yield { type: 'done', stopReason: 'stop' };
    },
  };
}

const tokens = (req: ModelRequest | undefined) =>
  Math.ceil(JSON.stringify({ messages: req?.messages ?? [], tools: req?.tools ?? [] }).length / 4);

async function measure(index: McpServerConfig['index']) {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-mcp-'));
  const db = await openPglite(join(dir, 'pg'));
  const log = createLogger('silent', []);
  const manager = mcpManager(
    [
      {
        name: 'tracker',
        transport: {
          kind: 'stdio',
          command: process.execPath,
          args: [SERVER, 'many', String(TOOLS)],
          env: {},
        },
        trusted: false,
        sensitive: false,
        allow: [],
        deny: [],
        index,
        where: 'bench',
      },
    ],
    {
      limits: DEFAULT_MCP_LIMITS,
      log,
      report: (line) => console.error(line),
      ownEnv: process.env,
      cwd: dir,
      version: 'bench',
      redact: (t) => t,
      builtins: new Set(),
      toolTimeoutMs: 10_000,
    },
  );
  try {
    await migrate(db);
    manager.start();
    await manager.ready();
    const requests: ModelRequest[] = [];
    const grants = sessionGrants(db, () => new Date());
    const assistant = createAssistant({
      db,
      log,
      owners: { bench: 'owner' },
      workspace: dir,
      gate: permissionChain({ workspace: dir, grants, outside: (tool) => manager.policy(tool) }),
      route: {
        name: 'default',
        entries: [{ providerName: 'bench', provider: recordingProvider(requests), model: 'm' }],
      },
      tools: createToolRegistry([...builtinPureTools, createLoadToolTool(manager)], () => manager.checked()),
      outside: manager,
    });
    const say = (text: string) =>
      assistant.handle({ channel: 'bench', room: 'r', senderId: 'owner', text }, () => {});
    await say('hi');
    await say('load one');
    const [first, , afterLoad] = requests;
    return {
      offered: (first?.tools ?? []).filter((t) => t.name.startsWith('tracker__')).length,
      tokensPerRequest: tokens(first),
      tokensAfterLoadingOne: tokens(afterLoad),
    };
  } finally {
    await manager.stop();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function mcpIndexBench() {
  const eager = await measure(false);
  const indexed = await measure('auto');
  return {
    name: 'mcp-index',
    serverTools: TOOLS,
    tokenEstimate: '4 characters a token over system prompt, messages and tool schemas',
    eagerTokensPerRequest: eager.tokensPerRequest,
    eagerSchemasOffered: eager.offered,
    indexedTokensPerRequest: indexed.tokensPerRequest,
    indexedSchemasOffered: indexed.offered,
    indexedTokensAfterLoadingOne: indexed.tokensAfterLoadingOne,
    ratio: Math.round((eager.tokensPerRequest / indexed.tokensPerRequest) * 100) / 100,
    goal: 'indexed < eager per request',
  };
}
