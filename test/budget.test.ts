// Spend caps with the scripted model and a price table: each of 50/80/100% is said exactly once,
// at the cap a message gets the refusal line and no model call is made, a digest pauses and runs
// again the next day, and a digest's own cap stops it between steps.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OutboundEvent } from '../src/channel/port.ts';
import { createAssistant } from '../src/core/assistant.ts';
import { budgetReport, capRefusal, levelsReached } from '../src/core/budget.ts';
import { createLogger } from '../src/log.ts';
import type { Db } from '../src/store/db.ts';
import { sessionGrants } from '../src/store/grants.ts';
import { migrate } from '../src/store/migrate.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import { conservativeGate } from './support/gates.ts';
import {
  type ScriptedModel,
  type ScriptStep,
  scriptedRoute,
  startScriptedModel,
} from './support/scripted-model.ts';
import { embeddedBackend } from './support/services.ts';

describe('the pure parts', () => {
  it.each([
    [0.49, 1, []],
    [0.5, 1, [50]],
    [0.8, 1, [50, 80]],
    [1.2, 1, [50, 80, 100]],
    [5, undefined, []],
  ])('spent %d of cap %s reaches %j', (spent, cap, levels) => {
    expect(levelsReached(spent, cap)).toEqual(levels);
  });

  it('refuses at a reached cap with one line naming it and the fix', () => {
    expect(capRefusal({ daily: 0.99, monthly: 3 }, { dailyUsd: 1, monthlyUsd: 30 })).toBeUndefined();
    const line = capRefusal({ daily: 1, monthly: 3 }, { dailyUsd: 1 }) as string;
    expect(line).toMatch(/budget\.daily_usd.*\/budget daily/);
    expect(line).not.toContain('\n');
    expect(capRefusal({ daily: 0, monthly: 30 }, { monthlyUsd: 30 })).toMatch(/budget\.monthly_usd/);
    expect(capRefusal({ daily: 99, monthly: 99 }, {})).toBeUndefined();
  });

  it('reports each cap with its spend', () => {
    expect(budgetReport({ daily: 0.6, monthly: 2 }, { dailyUsd: 1 })).toMatch(
      /^Today \(UTC\): \$0\.60 of \$1\.00 \(60%\)\nThis month: \$2\.00 \(no cap; set budget\.monthly_usd\)/,
    );
  });
});

describe('spend caps over a real store', () => {
  let db: Db;
  let cleanup: () => Promise<void>;
  let model: ScriptedModel;
  let now = new Date();
  const owner: string[] = [];

  // 5 completion tokens at $60,000 per million: every call costs $0.30.
  const priced: ScriptStep = { chunks: ['ok'], usage: { prompt_tokens: 12, completion_tokens: 5 } };
  const tool: ScriptStep = {
    chunks: [],
    toolCalls: [{ name: 'calculate_like', argumentChunks: ['{}'] }],
    usage: { prompt_tokens: 12, completion_tokens: 5 },
  };

  beforeAll(async () => {
    ({ db, cleanup } = await embeddedBackend.open());
    await migrate(db);
    model = await startScriptedModel((request) => {
      const messages = request.messages as Array<{ role: string; content: string }>;
      return messages.some((m) => m.role === 'user' && m.content?.includes('loop forever')) ? tool : priced;
    });
  });
  afterAll(async () => {
    await model.close();
    await cleanup();
  });
  beforeEach(async () => {
    await db.query('delete from usage');
    await db.query('delete from budget_notices');
    await db.query('delete from budget_overrides');
    owner.length = 0;
    now = new Date();
  });

  const assistant = (caps: Parameters<typeof createAssistant>[0]['budget']) => {
    const a = createAssistant({
      db,
      log: createLogger('silent', []),
      now: () => now,
      owners: { test: 'owner' },
      workspace: '/nonexistent',
      gate: conservativeGate(sessionGrants(db, () => now)),
      route: scriptedRoute(model.baseUrl),
      prices: { 'test-model': { inputPerMTok: 0, outputPerMTok: 60_000 } },
      tools: createToolRegistry([
        {
          name: 'calculate_like',
          description: 'A trusted no-op tool for the test.',
          trusted: true,
          inputSchema: { type: 'object', properties: {}, additionalProperties: false },
          async execute() {
            return 'done';
          },
        },
      ]),
      retry: { retries: 0 },
      ...(caps ? { budget: caps } : {}),
    });
    return a;
  };
  const say = async (a: ReturnType<typeof assistant>, text: string) => {
    const events: OutboundEvent[] = [];
    await a.handle({ channel: 'test', room: 'r', senderId: 'owner', text }, (e) => {
      events.push(e);
    });
    return events;
  };
  const notices = (events: OutboundEvent[]) => events.flatMap((e) => (e.type === 'notice' ? [e.text] : []));

  it('tells the owner once at 50, 80 and 100%, then refuses without calling the model', async () => {
    const a = assistant({ dailyUsd: 1 });
    const seen: string[][] = [];
    for (let i = 0; i < 4; i++) seen.push(notices(await say(a, `hello ${i}`)));
    expect(seen).toEqual([
      [],
      ["Spend: 50% of today's cap reached ($0.60 of $1.00)."],
      ["Spend: 80% of today's cap reached ($0.90 of $1.00)."],
      [
        expect.stringMatching(
          /^Spend: 100% of today's cap reached \(\$1\.20 of \$1\.00\)\. New turns are refused/,
        ),
      ],
    ]);
    const calls = model.requests.length;
    const refused = await say(a, 'one more');
    expect(refused.filter((e) => e.type === 'reply')).toEqual([
      {
        type: 'reply',
        text: expect.stringMatching(
          /^Today's spend cap is reached \(\$1\.20 of \$1\.00, budget\.daily_usd\)/,
        ),
      },
    ]);
    expect(model.requests.length).toBe(calls);
    // A restart says nothing again: the notices are in the database.
    expect(notices(await say(assistant({ dailyUsd: 1 }), 'again'))).toEqual([]);

    // /budget shows it and raises today's cap; then turns run again.
    expect((await say(a, '/budget')).at(-1)).toMatchObject({
      text: expect.stringMatching(/^Today \(UTC\): \$1\.20 of \$1\.00 \(120%\)/),
    });
    expect((await say(a, '/budget daily 3')).at(-1)).toMatchObject({
      text: "Today's cap is now $3.00 (until 00:00 UTC; budget.daily_usd applies again tomorrow).",
    });
    const after = await say(a, 'now?');
    expect(after.filter((e) => e.type === 'reply')).toEqual([{ type: 'reply', text: 'ok', step: 1 }]);
    expect(model.requests.length).toBe(calls + 1);
  });

  it('local models with no price cost nothing', async () => {
    const free = createAssistant({
      db,
      log: createLogger('silent', []),
      owners: { test: 'owner' },
      workspace: '/nonexistent',
      gate: conservativeGate(sessionGrants(db, () => now)),
      route: scriptedRoute(model.baseUrl),
      tools: createToolRegistry([]),
      retry: { retries: 0 },
      budget: { dailyUsd: 0.01 },
    });
    for (let i = 0; i < 3; i++) {
      const events = await say(free, `free ${i}`);
      expect(events.filter((e) => e.type === 'reply')).toEqual([{ type: 'reply', text: 'ok', step: 1 }]);
    }
  });

  it('a digest at the cap pauses and says so, and runs again the next day', async () => {
    const a = assistant({ dailyUsd: 0.5 });
    await say(a, 'spend');
    await say(a, 'spend more');
    const events: OutboundEvent[] = [];
    const calls = model.requests.length;
    const status = await a.runUnattended({ channel: 'test', room: 'digest', text: 'the digest' }, (e) => {
      events.push(e);
    });
    expect(status).toBe('failed');
    expect(notices(events)).toEqual([expect.stringMatching(/^paused: Today's spend cap is reached/)]);
    expect(model.requests.length).toBe(calls);
    now = new Date(now.getTime() + 24 * 3_600_000);
    const next = await a.runUnattended({ channel: 'test', room: 'digest', text: 'the digest' }, () => {});
    expect(next).toBe('answered');
  });

  it("a digest's own cap stops it between steps, never mid-answer", async () => {
    const a = assistant({ perDigestUsd: 0.5 });
    a.start({ outbox: () => undefined, notifyOwner: async (text) => void owner.push(text) });
    const events: OutboundEvent[] = [];
    const status = await a.runUnattended({ channel: 'test', room: 'digest', text: 'loop forever' }, (e) => {
      events.push(e);
    });
    await a.stop();
    expect(status).toBe('failed');
    // Two steps of $0.30 each: the second one crosses the cap, and the third is never asked for.
    expect(notices(events).join('\n')).toMatch(/this digest run reached its cap \(\$0\.60 of \$0\.50/);
    const asked = model.requests.filter((r) => JSON.stringify(r).includes('loop forever'));
    expect(asked).toHaveLength(2);
  });
});
