import { transcriber } from '../src/attachments/transcribe.ts';
import { requireDefaultRoute } from '../src/config/load.ts';
import { limitsOf } from '../src/config/models.ts';
import { type Assistant, type AssistantDeps, createAssistant } from '../src/core/assistant.ts';
import { buildRoute } from '../src/gateway/build-route.ts';
import type { McpManager } from '../src/mcp/manager.ts';
import { outputStore } from '../src/offload/output-store.ts';
import { permissionChain } from '../src/permissions/chain.ts';
import { loadSkills, type Skill, skillIndex } from '../src/skills/index.ts';
import type { Db } from '../src/store/db.ts';
import { sessionGrants } from '../src/store/grants.ts';
import { builtinPureTools } from '../src/tools/builtin/index.ts';
import { createLoadSkillTool } from '../src/tools/builtin/load-skill.ts';
import { createLoadToolTool } from '../src/tools/builtin/load-tool.ts';
import { createRetrieveOutputTool } from '../src/tools/builtin/retrieve-output.ts';
import { webFetchTool } from '../src/tools/builtin/web-fetch.ts';
import { writeFileTool } from '../src/tools/builtin/write-file.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import { hostShellTool } from './host-shell.ts';
import { buildMcp, serverLine } from './mcp.ts';
import type { Runtime } from './runtime.ts';
import { packageVersion } from './version.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The assistant as configured: routes, tools, limits. Also starts the daily collection of expired
 * outputs (once now); the returned `stop` ends it.
 */
export async function buildAssistant(
  { config, log }: Runtime,
  db: Db,
  owners: Record<string, string>,
  digestCommand?: AssistantDeps['digestCommand'],
): Promise<{
  assistant: Assistant;
  skills: Skill[];
  /** Not started: runChannels starts it as a service. */
  mcp: McpManager;
  tellOwner(notify: (line: string) => Promise<void>): void;
  stop(): void;
}> {
  requireDefaultRoute(config);
  const { models } = config;
  const now = () => new Date();
  const outputs = outputStore(db, now, models.offload.retentionMs);
  const collect = async () => {
    const removed = await outputs.collect().catch((error: Error) => {
      log.warn(`could not collect expired outputs: ${error.message}`);
      return 0;
    });
    if (removed > 0) log.info({ removed }, 'collected expired tool outputs');
  };
  await collect();
  const timer = setInterval(() => void collect(), DAY_MS);
  timer.unref();

  const skills = loadSkills(config.skillsDir);
  const grants = sessionGrants(db, now, models.loop.grantTtlMs);
  const limits = limitsOf(models);
  const builtins = [
    ...builtinPureTools,
    createRetrieveOutputTool(outputs),
    createLoadSkillTool(skills),
    hostShellTool(config.hostJail, config.sandbox),
    writeFileTool,
    webFetchTool,
  ];
  const mcp = buildMcp(
    { config, log },
    new Set([...builtins.map((t) => t.name), 'load_tool']),
    limits.toolTimeoutMs,
  );
  const { manager } = mcp;
  // load_tool only where there can be an index: it costs its schema in every request.
  if (config.mcpServers.length > 0) builtins.push(createLoadToolTool(manager));
  const assistant = createAssistant({
    db,
    log,
    now,
    owners,
    route: buildRoute('default', models),
    ...(models.sensitiveRoute ? { sensitiveRoute: buildRoute(models.sensitiveRoute, models) } : {}),
    prices: models.prices,
    grants,
    gate: permissionChain({
      workspace: config.workspace,
      grants,
      sandboxNetwork: config.sandbox.network,
      outside: (tool) => manager.policy(tool),
    }),
    tools: createToolRegistry(builtins, () => manager.checked()),
    ...(config.mcpServers.length > 0
      ? {
          outside: manager,
          toolsReport: () => [
            `Built-in tools: ${builtins.map((t) => t.name).join(', ')}`,
            'MCP servers:',
            ...manager.status().map((s) => `  ${serverLine(s)}`),
          ],
        }
      : {}),
    skillIndex: skillIndex(skills),
    ...(digestCommand ? { digestCommand } : {}),
    workspace: config.workspace,
    ...(config.sandbox.configured ? { sandbox: config.sandbox } : {}),
    outputs,
    limits,
    attachments: {
      limits: config.attachments.limits,
      sensitive: config.attachments.sensitive,
      ...(config.attachments.transcription
        ? { transcribe: transcriber(config.attachments.transcription) }
        : {}),
    },
    budget: config.budget,
    version: packageVersion(),
  });
  return { assistant, skills, mcp: manager, tellOwner: mcp.tellOwner, stop: () => clearInterval(timer) };
}
