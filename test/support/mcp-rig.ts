// A real steward composed as `steward start` composes it (config file, buildAssistant, the MCP
// manager started as a service), with the scripted model as the only double. For the MCP tests.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAssistant } from '../../cli/build-assistant.ts';
import type { OutboundEvent, PermissionDecision } from '../../src/channel/port.ts';
import { loadConfig } from '../../src/config/load.ts';
import type { SessionEvent } from '../../src/core/session-events.ts';
import { createLogger } from '../../src/log.ts';
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { sessionLog } from '../../src/store/session-log.ts';
import { type ScriptedModel, type ScriptStep, startScriptedModel } from './scripted-model.ts';
import { embeddedBackend } from './services.ts';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
export const EVERYTHING = here('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = here('../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const HOSTILE = here('./hostile-mcp-server.ts');

export interface McpRig {
  db: Db;
  model: ScriptedModel;
  built: Awaited<ReturnType<typeof buildAssistant>>;
  workspace: string;
  /** Everything the sink got, in order. */
  out: OutboundEvent[];
  /** Lines the manager reported for the owner. */
  reports: string[];
  say(text: string): Promise<void>;
  decide(requestId: string, decision: PermissionDecision): Promise<void>;
  events(): Promise<SessionEvent[]>;
  prompts(): Extract<OutboundEvent, { type: 'permission_prompt' }>['prompt'][];
  close(): Promise<void>;
}

export async function mcpRig(options: {
  /** The `mcp.servers` section; a function gets the workspace (for a server rooted there). */
  servers:
    | Record<string, Record<string, unknown>>
    | ((workspace: string) => Record<string, Record<string, unknown>>);
  script: ScriptStep[] | ((request: Record<string, unknown>) => ScriptStep | undefined);
  file?: Record<string, unknown>;
  env?: Record<string, string>;
  /** Another rig's database (a restart): this rig leaves it open when it closes. */
  db?: Db;
}): Promise<McpRig> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-mcp-'));
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const { db, cleanup } = options.db
    ? { db: options.db, cleanup: async () => {} }
    : await embeddedBackend.open();
  await migrate(db);
  const model = await startScriptedModel(options.script);
  const file = join(dir, 'steward.yaml');
  writeFileSync(
    file,
    JSON.stringify({
      data_dir: join(dir, 'data'),
      workspace,
      model: { base_url: model.baseUrl, name: 'm' },
      sandbox: { host_jail: 'off' },
      ...options.file,
      mcp: { servers: typeof options.servers === 'function' ? options.servers(workspace) : options.servers },
    }),
  );
  const config = loadConfig({ STEWARD_CONFIG: file, ...options.env }, dir);
  const built = await buildAssistant({ config, log: createLogger('silent', config.secrets) }, db, {
    test: 'owner',
  });
  const reports: string[] = [];
  built.tellOwner(async (line) => {
    reports.push(line);
  });
  built.mcp.start();
  const out: OutboundEvent[] = [];
  const sink = async (event: OutboundEvent) => {
    out.push(event);
  };
  const sessions = sessionLog(db);
  return {
    db,
    model,
    built,
    workspace,
    out,
    reports,
    say: (text) => built.assistant.handle({ channel: 'test', room: 'r', senderId: 'owner', text }, sink),
    async decide(requestId, decision) {
      const result = await built.assistant.decide(
        { requestId, decision, channel: 'test', senderId: 'owner' },
        sink,
      );
      if (result.ok) await result.resumed;
    },
    async events() {
      return sessions.events((await sessions.open('test', 'r')).id);
    },
    prompts: () => out.flatMap((e) => (e.type === 'permission_prompt' ? [e.prompt] : [])),
    async close() {
      await built.mcp.stop();
      built.stop();
      await model.close();
      await cleanup();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The scripted model's step calling one tool with these arguments. */
export const call = (name: string, args: Record<string, unknown>, id?: string): ScriptStep => ({
  chunks: [],
  toolCalls: [{ ...(id ? { id } : {}), name, argumentChunks: [JSON.stringify(args)] }],
});

/** The tool names a recorded request offered. */
export const offered = (request: Record<string, unknown> | undefined): string[] =>
  ((request?.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);

/** The content of the tool messages a recorded request carried. */
export const toolMessages = (request: Record<string, unknown> | undefined): string[] =>
  ((request?.messages ?? []) as Array<{ role: string; content: string }>)
    .filter((m) => m.role === 'tool')
    .map((m) => m.content);

export const systemOf = (request: Record<string, unknown> | undefined): string =>
  ((request?.messages ?? []) as Array<{ content: string }>)[0]?.content ?? '';
