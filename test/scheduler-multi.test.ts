// Two stewards against one PostgreSQL: two pools, two engines, two assistants, one clock and one
// model. Every fire must be posted exactly once. Run for the production engine (pg-boss) and for
// the row lease alone (the PGlite engine), which is the guard behind both.
import { afterEach, describe, expect, it } from 'vitest';
import { type OpenedStore, openPostgresStore } from './support/scheduler-backends.ts';
import {
  type DigestHarness,
  digestRuns,
  recordingOutboxes,
  startDigestHarness,
  TestClock,
  waitFor,
} from './support/scheduler-harness.ts';
import { reply, type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { postgresUrl } from './support/services.ts';

const admin = postgresUrl();
const FIRES = 24;
const FIVE_MINUTES = 5 * 60_000;

describe.skipIf(!admin)('two stewards sharing one PostgreSQL', () => {
  let store: OpenedStore | undefined;
  let model: ScriptedModel | undefined;
  const running: DigestHarness[] = [];
  afterEach(async () => {
    for (const h of running.splice(0)) await h.stop();
    await model?.close();
    await store?.cleanup();
  });

  it.each(['pg-boss', 'lease'] as const)(
    `post exactly once per fire over ${FIRES} fires (%s engine)`,
    async (engine) => {
      store = await openPostgresStore(admin as string);
      const secondPool = await store.another();
      // More answers than fires: a second run of any fire would be visible as an extra post.
      model = await startScriptedModel(Array.from({ length: FIRES * 2 }, (_, i) => reply(`News #${i + 1}.`)));
      const clock = new TestClock(new Date('2026-03-30T05:58:00Z'));
      const outs = [recordingOutboxes(), recordingOutboxes()];
      for (const [i, db] of [store.db, secondPool].entries()) {
        const out = outs[i] as ReturnType<typeof recordingOutboxes>;
        running.push(
          await startDigestHarness({
            db,
            databaseUrl: store.url as string,
            engine,
            modelUrl: model.baseUrl,
            clock,
            outboxFor: out.outboxFor,
            ownerSink: out.ownerSink,
          }),
        );
      }
      const [first, second] = running as [DigestHarness, DigestHarness];
      expect(await first.command('/digest add "*/5 * * * *" UTC news-room Summarize the news')).toMatch(
        /^Added digest summarize-the-news/,
      );
      const posts = () => outs.flatMap((o) => o.posts('test', 'news-room'));

      for (let fire = 1; fire <= FIRES; fire++) {
        await clock.tick(FIVE_MINUTES);
        await Promise.all([first.scheduler.idle(), second.scheduler.idle()]);
        await waitFor(() => posts().length >= fire, `post ${fire}`);
      }
      await clock.tick(60_000); // 05:58 + 24 × 5 min + 1 = 07:59: past the last fire, before the next
      await Promise.all([first.scheduler.idle(), second.scheduler.idle()]);

      expect(posts()).toHaveLength(FIRES);
      expect(new Set(posts()).size).toBe(FIRES);
      expect(model.requests).toHaveLength(FIRES);
      const runs = await digestRuns(store.db);
      expect(runs).toHaveLength(FIRES);
      expect(runs.every((r) => r.outcome === 'posted' && r.posted === 1 && r.trigger === 'schedule')).toBe(
        true,
      );
      expect(runs.map((r) => r.fire_at.getTime())).toEqual(
        Array.from({ length: FIRES }, (_, i) => Date.parse('2026-03-30T06:00:00Z') + i * FIVE_MINUTES),
      );
      expect(outs.flatMap((o) => o.ownerNotices('test'))).toEqual([]);
    },
  );
});
