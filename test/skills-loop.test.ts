// Skills are lazy: the system prompt carries one line per skill; a body reaches the model only
// after load_skill. Token counts (4 characters a token) are recorded to show it.

import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAssistant } from '../src/core/assistant.ts';
import { estimateTokens } from '../src/core/compaction.ts';
import { openAiCompatible } from '../src/gateway/openai-compatible.ts';
import type { ChatMessage } from '../src/gateway/types.ts';
import { createLogger } from '../src/log.ts';
import { loadSkills, skillIndex } from '../src/skills/index.ts';
import type { Db } from '../src/store/db.ts';
import { sessionGrants } from '../src/store/grants.ts';
import { migrate } from '../src/store/migrate.ts';
import { createLoadSkillTool } from '../src/tools/builtin/load-skill.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import { conservativeGate } from './support/gates.ts';
import { reply, type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { embeddedBackend } from './support/services.ts';

const skills = loadSkills(fileURLToPath(new URL('../skills', import.meta.url)));
const coding = skills.find((s) => s.name === 'coding-task');

/** The wire messages as the loop's own message shape, for the token estimate. */
const tokensOf = (request: Record<string, unknown> | undefined) =>
  estimateTokens(
    ((request?.messages ?? []) as Array<{ role: string; content: string | null }>).map(
      (m) => ({ role: 'user', content: m.content ?? '' }) as ChatMessage,
    ),
  );

describe('skills in the loop', () => {
  let db: Db;
  let cleanup: () => Promise<void>;
  let model: ScriptedModel;
  beforeEach(async () => {
    ({ db, cleanup } = await embeddedBackend.open());
    await migrate(db);
  });
  afterEach(async () => {
    await model.close();
    await cleanup();
  });

  it('keeps bodies out of baseline requests and brings one in only after load_skill', async () => {
    if (!coding) throw new Error('the coding-task seed skill is missing');
    model = await startScriptedModel([
      reply('Hello.'),
      { chunks: [], toolCalls: [{ name: 'load_skill', argumentChunks: ['{"name":"coding-task"}'] }] },
      reply('Plan first.'),
    ]);
    const assistant = createAssistant({
      db,
      gate: conservativeGate(sessionGrants(db, () => new Date())),
      log: createLogger('silent', []),
      owners: { test: 'owner' },
      workspace: '/nonexistent',
      route: {
        name: 'default',
        entries: [
          { providerName: 'default', provider: openAiCompatible({ baseUrl: model.baseUrl }), model: 'm' },
        ],
      },
      tools: createToolRegistry([createLoadSkillTool(skills)]),
      skillIndex: skillIndex(skills),
    });
    const say = (text: string) =>
      assistant.handle({ channel: 'test', room: 'r', senderId: 'owner', text }, () => {});
    await say('hi');
    await say('fix the failing test in my project');

    const bodyLine = coding.body.split('\n').find((l) => l.trim().length > 40) ?? '';
    const [baseline, beforeLoad, afterLoad] = model.requests;
    const system = ((baseline?.messages ?? []) as Array<{ content: string }>)[0]?.content ?? '';
    for (const skill of skills) expect(system).toContain(`- ${skill.name}: `);
    expect(JSON.stringify(baseline)).not.toContain(bodyLine);
    expect(JSON.stringify(beforeLoad)).not.toContain(bodyLine);
    expect(JSON.stringify(afterLoad)).toContain(bodyLine);

    const counts = {
      baseline: tokensOf(baseline),
      beforeLoad: tokensOf(beforeLoad),
      afterLoad: tokensOf(afterLoad),
      body: Math.ceil(coding.body.length / 4),
    };
    console.info(`skill token counts: ${JSON.stringify(counts)}`);
    expect(counts.baseline).toBeLessThan(counts.body);
    // Rounding of the estimate can lose a token or two; the body is what the request grew by.
    expect(counts.afterLoad - counts.beforeLoad).toBeGreaterThanOrEqual(Math.floor(counts.body * 0.98));
  });
});
