// The database goes away in the middle of a turn (a private PostgreSQL cluster, really stopped,
// while the model streams): the owner is told once, the message is kept, and once the database is
// back the sweeper resumes the turn and its answer arrives exactly once, without a restart.
import { afterAll, describe, expect, it } from 'vitest';
import type { OutboundEvent } from '../src/channel/port.ts';
import { createAssistant } from '../src/core/assistant.ts';
import { createLogger } from '../src/log.ts';
import { sessionGrants } from '../src/store/grants.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPostgres } from '../src/store/open-db.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import { conservativeGate } from './support/gates.ts';
import { reply, type ScriptedModel, scriptedRoute, startScriptedModel } from './support/scripted-model.ts';
import { type PrivatePostgres, privatePostgres } from './support/services.ts';
import { waitFor } from './support/telegram-emulator.ts';

const pgServer = await privatePostgres();

describe.skipIf(!pgServer)('a turn the database drops mid-way', () => {
  const pgs = pgServer as PrivatePostgres;
  let model: ScriptedModel | undefined;
  afterAll(async () => {
    await model?.close();
    await pgs.destroy();
  });

  it('says so once and is resumed by the sweeper once the database is back', async () => {
    // The first answer takes a while to start, so the database is gone when it arrives.
    model = await startScriptedModel([
      { ...reply('Kept and answered.'), headerDelayMs: 1500 },
      reply('Kept and answered.'),
    ]);
    const db = await openPostgres(pgs.url);
    await migrate(db);
    const a = createAssistant({
      db,
      gate: conservativeGate(sessionGrants(db, () => new Date())),
      log: createLogger('silent', []),
      owners: { test: 'owner' },
      route: scriptedRoute(model.baseUrl),
      tools: createToolRegistry([]),
      workspace: '/tmp',
      limits: { sweepEveryMs: 300 },
    });
    const seen: OutboundEvent[] = [];
    const sink = async (e: OutboundEvent) => {
      seen.push(e);
    };
    await a.start({ outbox: () => sink });
    await a.online('test');
    try {
      const handled = a.handle({ channel: 'test', room: 'r', senderId: 'owner', text: 'hello' }, sink);
      await waitFor(() => model?.requests.length === 1, 'the model call');
      await pgs.stop();
      await handled;
      const notices = seen.filter((e) => e.type === 'notice');
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatchObject({
        level: 'error',
        text: expect.stringMatching(/^Could not finish this turn \(.+\); your message is kept/),
      });
      expect(seen.filter((e) => e.type === 'reply')).toHaveLength(0);

      await pgs.start();
      await waitFor(() => seen.some((e) => e.type === 'reply'), 'the resumed answer', 20_000);
      await new Promise((r) => setTimeout(r, 1000));
      await a.idle();
      expect(seen.filter((e) => e.type === 'reply')).toEqual([
        { type: 'reply', text: 'Kept and answered.', step: 1 },
      ]);
      const ended = await db.query<{ n: number }>(
        "select count(*)::int as n from session_events where kind = 'turn_ended'",
      );
      expect(ended.rows[0]?.n).toBe(1);
    } finally {
      await a.stop();
      await db.close();
    }
  }, 60_000);

  it('finishes a cut-off turn before the next message instead of superseding it', async () => {
    await model?.close();
    model = await startScriptedModel([
      { ...reply('First, finished.'), headerDelayMs: 1500 },
      reply('First, finished.'),
      reply('Second.'),
    ]);
    const db = await openPostgres(pgs.url);
    const a = createAssistant({
      db,
      gate: conservativeGate(sessionGrants(db, () => new Date())),
      log: createLogger('silent', []),
      owners: { test: 'owner' },
      route: scriptedRoute(model.baseUrl),
      tools: createToolRegistry([]),
      workspace: '/tmp',
      // No sweep during the test: only the next message can rescue the first.
      limits: { sweepEveryMs: 3_600_000 },
    });
    const seen: OutboundEvent[] = [];
    const sink = async (e: OutboundEvent) => {
      seen.push(e);
    };
    await a.start({ outbox: () => sink });
    await a.online('test');
    try {
      const handled = a.handle({ channel: 'test', room: 'r2', senderId: 'owner', text: 'first' }, sink);
      await waitFor(() => model?.requests.length === 1, 'the model call');
      await pgs.stop();
      await handled;
      await pgs.start();
      await a.handle({ channel: 'test', room: 'r2', senderId: 'owner', text: 'second' }, sink);
      await a.idle();
      expect(seen.filter((e) => e.type === 'reply').map((e) => (e as { text: string }).text)).toEqual([
        'First, finished.',
        'Second.',
      ]);
      const superseded = await db.query(
        "select 1 from session_events where kind = 'turn_ended' and payload->>'outcome' = 'superseded'",
      );
      expect(superseded.rows).toHaveLength(0);
    } finally {
      await a.stop();
      await db.close();
    }
  }, 60_000);
});
