import { requireDefaultRoute } from '../src/config/load.ts';
import { limitsOf } from '../src/config/models.ts';
import { type Assistant, type AssistantDeps, createAssistant } from '../src/core/assistant.ts';
import { buildRoute } from '../src/gateway/build-route.ts';
import { outputStore } from '../src/offload/output-store.ts';
import { permissionChain } from '../src/permissions/chain.ts';
import { loadSkills, type Skill, skillIndex } from '../src/skills/index.ts';
import type { Db } from '../src/store/db.ts';
import { sessionGrants } from '../src/store/grants.ts';
import { builtinPureTools } from '../src/tools/builtin/index.ts';
import { createLoadSkillTool } from '../src/tools/builtin/load-skill.ts';
import { createRetrieveOutputTool } from '../src/tools/builtin/retrieve-output.ts';
import { webFetchTool } from '../src/tools/builtin/web-fetch.ts';
import { writeFileTool } from '../src/tools/builtin/write-file.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import { hostShellTool } from './host-shell.ts';
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
): Promise<{ assistant: Assistant; skills: Skill[]; stop(): void }> {
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

  const shellTool = await hostShellTool(config.hostJail, config.sandbox);
  const skills = loadSkills(config.skillsDir);
  const grants = sessionGrants(db, now, models.loop.grantTtlMs);
  const assistant = createAssistant({
    db,
    log,
    now,
    owners,
    route: buildRoute('default', models),
    ...(models.sensitiveRoute ? { sensitiveRoute: buildRoute(models.sensitiveRoute, models) } : {}),
    prices: models.prices,
    grants,
    gate: permissionChain({ workspace: config.workspace, grants, sandboxNetwork: config.sandbox.network }),
    tools: createToolRegistry([
      ...builtinPureTools,
      createRetrieveOutputTool(outputs),
      createLoadSkillTool(skills),
      shellTool,
      writeFileTool,
      webFetchTool,
    ]),
    skillIndex: skillIndex(skills),
    ...(digestCommand ? { digestCommand } : {}),
    workspace: config.workspace,
    ...(config.sandbox.configured ? { sandbox: config.sandbox } : {}),
    outputs,
    limits: limitsOf(models),
    budget: config.budget,
    version: packageVersion(),
  });
  return { assistant, skills, stop: () => clearInterval(timer) };
}
