// Digests end to end on each database: the real scheduler engine (pg-boss on PostgreSQL, the row
// lease on PGlite), the real assistant and provider client, and the scripted model server. Time is
// a pg-boss TestClock; nothing sleeps for the minutes it simulates.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/errors.ts';
import { DIGEST_HELP } from '../src/scheduler/index.ts';
import { type OpenedStore, type SchedulerBackend, schedulerBackends } from './support/scheduler-backends.ts';
import {
  type DigestHarness,
  type DigestHarnessOptions,
  digestRuns,
  recordingOutboxes,
  startDigestHarness,
  TestClock,
  waitFor,
} from './support/scheduler-harness.ts';
import { reply, type ScriptedModel, type ScriptStep, startScriptedModel } from './support/scripted-model.ts';

const MINUTE = 60_000;
// Monday 30 March 2026, 07:25 in Paris.
const MONDAY_0725 = new Date('2026-03-30T05:25:00Z');
const ADD_MARKETS = '/digest add "30 7 * * 1-5" Europe/Paris here markets-digest';

describe.each(schedulerBackends().map((b) => [`${b.name} (${b.engine})`, b] as const))(
  'digests on %s',
  (_name, backend: SchedulerBackend) => {
    let store: OpenedStore;
    let model: ScriptedModel;
    let clock: TestClock;
    let out: ReturnType<typeof recordingOutboxes>;
    const harnesses: DigestHarness[] = [];

    beforeEach(async () => {
      store = await backend.open();
      clock = new TestClock(MONDAY_0725);
      out = recordingOutboxes((_channel, room) => room !== 'nowhere');
    });
    afterEach(async () => {
      for (const h of harnesses.splice(0)) await h.stop();
      await model?.close();
      await store.cleanup();
    });

    const start = async (script: ScriptStep[] | undefined, extra: Partial<DigestHarnessOptions> = {}) => {
      if (script) model = await startScriptedModel(script);
      const h = await startDigestHarness({
        db: store.db,
        modelUrl: model.baseUrl,
        clock,
        outboxFor: out.outboxFor,
        ownerSink: out.ownerSink,
        ...(store.url ? { databaseUrl: store.url } : {}),
        ...extra,
      });
      harnesses.push(h);
      expect(h.scheduler.engine).toBe(backend.engine);
      return h;
    };
    const stop = async (h: DigestHarness) => {
      harnesses.splice(harnesses.indexOf(h), 1);
      await h.stop();
    };
    const posted = async (room: string, n: number) =>
      waitFor(() => out.posts('test', room).length >= n, `${n} post(s) in ${room}`);
    const finishedRuns = async (n: number) =>
      waitFor(
        async () => (await digestRuns(store.db)).filter((r) => r.outcome !== 'running').length >= n,
        `${n} finished run(s)`,
      );

    it('fires at the cron time in its zone and posts the reply to the target room, with an audit row', async () => {
      const h = await start([reply('Markets: quiet open, bonds flat.')]);
      const added = await h.command(ADD_MARKETS, 'test', 'markets-room');
      expect(added).toBe(
        'Added digest markets-digest: "30 7 * * 1-5" Europe/Paris → here, skill markets-digest. Next run: Mon 30 Mar, 07:30. Pause it with /digest pause markets-digest.',
      );
      await h.advance(4 * MINUTE); // 07:29
      expect(out.events('test', 'markets-room')).toEqual([]);
      expect(model.requests).toHaveLength(0);

      await h.advance(2 * MINUTE); // 07:31
      await posted('markets-room', 1);
      await finishedRuns(1);
      expect(out.posts('test', 'markets-room')).toEqual(['Markets: quiet open, bonds flat.']);
      // Only the reply reaches the room: no tool chatter, no notices. The turn's start, which
      // shows nothing, comes first, so the channel can key the post by turn and step.
      const [started, post] = out.events('test', 'markets-room');
      expect(out.events('test', 'markets-room').map((e) => e.type)).toEqual(['turn_started', 'reply']);
      expect(started?.type === 'turn_started' && started.turnId).toMatch(/^[0-9a-f-]{36}$/);
      expect(post?.type === 'reply' && post.step).toBe(1);
      const messages = model.requests[0]?.messages as Array<{ role: string; content: string }>;
      expect(messages.at(-1)).toMatchObject({
        role: 'user',
        content: 'Load the markets-digest skill with load_skill and produce its digest.',
      });

      const [run] = await digestRuns(store.db);
      expect(run).toMatchObject({
        schedule_id: 'markets-digest',
        fire_at: new Date('2026-03-30T05:30:00Z'),
        trigger: 'schedule',
        outcome: 'posted',
        posted: 1,
        detail: null,
      });
      const session = await store.db.query<{ channel: string; room: string }>(
        'select channel, room from sessions where id = $1',
        [run?.session_id],
      );
      expect(session.rows).toEqual([{ channel: 'test', room: 'markets-room' }]);
      expect(out.ownerNotices('test')).toEqual([]);

      // Nothing more until tomorrow's fire.
      await h.advance(10 * MINUTE);
      expect(out.posts('test', 'markets-room')).toHaveLength(1);
      expect(await h.command('/digest list', 'test', 'markets-room')).toMatch(
        /^Digests \(1\):\nmarkets-digest: "30 7 \* \* 1-5" Europe\/Paris → here, skill markets-digest; next Tue 31 Mar, 07:30, last posted Mon 30 Mar, 07:30$/,
      );
    });

    it('reports a failed run (500, then a dropped connection) to the owner with the id; the next fire runs normally', async () => {
      const h = await start([
        { status: 500, body: { error: { message: 'upstream exploded' } } },
        { drop: true },
        reply('News: all calm.'),
      ]);
      const added = await h.command(
        '/digest add "*/5 * * * *" UTC news-room Summarize the news',
        'test',
        'dm',
      );
      expect(added).toMatch(
        /^Added digest summarize-the-news: "\*\/5 \* \* \* \*" UTC → news-room, "Summarize the news"/,
      );

      await h.advance(6 * MINUTE); // 05:30 fire fails with a 500
      await finishedRuns(1);
      await waitFor(() => out.ownerNotices('test').length === 1, 'the owner notice');
      expect(out.ownerNotices('test')[0]).toMatch(
        /^Digest summarize-the-news \(Mon 30 Mar, 05:30 \(UTC\)\) failed: model: .*500.*\. Next run: Mon 30 Mar, 05:35\.$/,
      );
      expect(out.shown('test', 'news-room')).toEqual([]);

      await h.advance(5 * MINUTE); // 05:35 fire: the connection drops
      await finishedRuns(2);
      await waitFor(() => out.ownerNotices('test').length === 2, 'the second owner notice');
      expect(out.ownerNotices('test')[1]).toMatch(
        /^Digest summarize-the-news \(Mon 30 Mar, 05:35 \(UTC\)\) failed: /,
      );
      expect(out.shown('test', 'news-room')).toEqual([]);

      await h.advance(5 * MINUTE); // 05:40 fire works
      await posted('news-room', 1);
      expect(out.posts('test', 'news-room')).toEqual(['News: all calm.']);
      const runs = await digestRuns(store.db);
      expect(runs.map((r) => [r.fire_at.toISOString(), r.outcome])).toEqual([
        ['2026-03-30T05:30:00.000Z', 'failed'],
        ['2026-03-30T05:35:00.000Z', 'failed'],
        ['2026-03-30T05:40:00.000Z', 'posted'],
      ]);
      expect(runs[0]?.detail).toMatch(/500/);
      expect(runs.every((r) => r.session_id !== null)).toBe(true);
    });

    it('after downtime runs a fire missed within the window once, and skips an older one with a notice', async () => {
      const first = await start([reply('Monday digest.'), reply('Wednesday digest.'), reply('extra')]);
      await first.command(ADD_MARKETS, 'test', 'markets-room');
      await stop(first); // down from 07:25

      await clock.setTime(new Date('2026-03-30T05:50:00Z')); // back at 07:50: 20 minutes late
      const second = await start(undefined);
      await posted('markets-room', 1);
      await second.advance(3 * MINUTE); // pg-boss's own catch-up and the sweeps change nothing
      expect(out.posts('test', 'markets-room')).toEqual(['Monday digest.']);
      expect((await digestRuns(store.db)).map((r) => [r.fire_at.toISOString(), r.outcome])).toEqual([
        ['2026-03-30T05:30:00.000Z', 'posted'],
      ]);
      expect(out.ownerNotices('test')).toEqual([]);
      await stop(second);

      await clock.setTime(new Date('2026-03-31T07:00:00Z')); // Tuesday 09:00: 90 minutes late
      const third = await start(undefined);
      await waitFor(() => out.ownerNotices('test').length === 1, 'the skip notice');
      expect(out.ownerNotices('test')[0]).toBe(
        'Digest markets-digest missed its run at Tue 31 Mar, 07:30 (Europe/Paris) while steward was not running; skipped, as it is more than 1 h late. Next run: Wed 1 Apr, 07:30.',
      );
      await third.advance(2 * MINUTE);
      expect(out.posts('test', 'markets-room')).toHaveLength(1);
      expect(model.requests).toHaveLength(1);

      await clock.setTime(new Date('2026-04-01T05:29:00Z')); // the next fire runs normally
      await third.advance(2 * MINUTE);
      await posted('markets-room', 2);
      expect(out.posts('test', 'markets-room')).toEqual(['Monday digest.', 'Wednesday digest.']);
      expect((await digestRuns(store.db)).map((r) => [r.fire_at.toISOString(), r.outcome])).toEqual([
        ['2026-03-30T05:30:00.000Z', 'posted'],
        ['2026-03-31T05:30:00.000Z', 'skipped'],
        ['2026-04-01T05:30:00.000Z', 'posted'],
      ]);
    });

    it('a fire caught up at start waits for its channel to come up, and fails clearly if it never does', async () => {
      const first = await start([reply('Monday digest.')]);
      await first.command(ADD_MARKETS, 'test', 'markets-room');
      await stop(first);
      await clock.setTime(new Date('2026-03-30T05:50:00Z'));
      // The channel logs in after the scheduler started (Matrix takes seconds): no outbox before.
      const up = Promise.withResolvers<void>();
      let online = false;
      const outboxFor = (channel: string, room: string) =>
        online ? out.outboxFor(channel, room) : undefined;
      const second = await start(undefined, { outboxFor, online: () => up.promise, channelWaitMs: 10_000 });
      await new Promise((r) => setTimeout(r, 300));
      expect((await digestRuns(store.db)).map((r) => r.outcome)).toEqual(['running']);
      online = true;
      up.resolve();
      await posted('markets-room', 1);
      await second.scheduler.idle();
      expect((await digestRuns(store.db)).map((r) => r.outcome)).toEqual(['posted']);
      await stop(second);

      await clock.setTime(new Date('2026-03-31T05:40:00Z')); // Tuesday's fire, 10 minutes late
      const third = await start(undefined, {
        outboxFor: () => undefined,
        online: () => new Promise<void>(() => {}),
        channelWaitMs: 1000,
      });
      await waitFor(() => out.ownerNotices('test').length === 1, 'the failure notice');
      expect(out.ownerNotices('test')[0]).toMatch(
        /^Digest markets-digest \(Tue 31 Mar, 07:30 \(Europe\/Paris\)\) failed: the test channel was not up 1 s after the fire\./,
      );
      await stop(third);

      // A fire too late to run: the skip notice, too, waits for the owner's room to exist.
      await clock.setTime(new Date('2026-04-01T07:00:00Z'));
      const ownerUp = Promise.withResolvers<void>();
      let ownerOnline = false;
      const fourth = await start(undefined, {
        ownerSink: (channel) => (ownerOnline ? out.ownerSink(channel) : undefined),
        online: () => ownerUp.promise,
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(out.ownerNotices('test')).toHaveLength(1);
      ownerOnline = true;
      ownerUp.resolve();
      await waitFor(() => out.ownerNotices('test').length === 2, 'the skip notice');
      expect(out.ownerNotices('test')[1]).toMatch(/^Digest markets-digest missed its run at Wed 1 Apr/);
      await stop(fourth);

      // Stopped while a fire waits for a channel that never came up: the stop does not wait the
      // channel's 10 minutes, and the owner is told by the next start's watchdog, not now.
      await clock.setTime(new Date('2026-04-02T05:40:00Z'));
      const fifth = await start(undefined, {
        online: () => new Promise<void>(() => {}),
        channelWaitMs: 600_000,
      });
      await waitFor(
        async () => (await digestRuns(store.db)).at(-1)?.fire_at.toISOString() === '2026-04-02T05:30:00.000Z',
        'the Thursday fire claimed',
      );
      const stopping = Date.now();
      await stop(fifth);
      // Far below the 600 s channel wait, with room for pg-boss's own stop on a loaded machine.
      expect(Date.now() - stopping).toBeLessThan(30_000);
      expect((await digestRuns(store.db)).at(-1)).toMatchObject({
        outcome: 'failed',
        detail: 'steward stopped before the test channel was up',
      });
      expect(out.ownerNotices('test')).toHaveLength(2);
    }, 120_000);

    it('pause, resume, remove, run now and list, from chat', async () => {
      const h = await start([reply('Run now.'), reply('After resume.'), reply('extra')]);
      expect(await h.command('/digest list')).toMatch(/^No digests yet\. Add one, e\.g\. \/digest add/);
      expect(await h.command('/digest')).toBe(DIGEST_HELP);
      await h.command(ADD_MARKETS, 'test', 'markets-room');
      expect(
        await h.command('/digest add "0 18 * * 5" Europe/Paris travel-room Weekly travel brief'),
      ).toMatch(/^Added digest weekly-travel-brief: /);

      expect(await h.command('/digest pause markets-digest')).toBe(
        'Paused digest markets-digest. Resume it with /digest resume markets-digest.',
      );
      expect(await h.command('/digest pause markets-digest')).toBe(
        'Digest markets-digest is already paused.',
      );
      await h.advance(10 * MINUTE); // 07:35: the paused fire passed
      expect(out.posts('test', 'markets-room')).toEqual([]);
      expect(await h.command('/digest list')).toMatch(/\nmarkets-digest: .*; paused\n/);

      expect(await h.command('/digest run markets-digest')).toBe(
        'Running digest markets-digest now; it posts to markets-room.',
      );
      await h.scheduler.idle();
      await posted('markets-room', 1);
      expect((await digestRuns(store.db)).map((r) => r.trigger)).toEqual(['manual']);

      expect(await h.command('/digest resume markets-digest')).toBe(
        'Resumed digest markets-digest. Next run: Tue 31 Mar, 07:30 (Europe/Paris).',
      );
      expect(await h.command('/digest resume markets-digest')).toBe('Digest markets-digest is not paused.');
      await clock.setTime(new Date('2026-03-31T05:29:00Z'));
      await h.advance(2 * MINUTE);
      await posted('markets-room', 2);
      expect(out.posts('test', 'markets-room')).toEqual(['Run now.', 'After resume.']);

      expect(await h.command('/digest remove markets-digest')).toBe(
        'Removed digest markets-digest. Its past runs stay in the audit trail.',
      );
      expect(await h.command('/digest remove markets-digest')).toBe(
        'No digest is named "markets-digest"; /digest list shows them.',
      );
      await clock.setTime(new Date('2026-04-01T05:29:00Z'));
      await h.advance(2 * MINUTE);
      expect(out.posts('test', 'markets-room')).toHaveLength(2);
      expect(await h.command('/digest list')).toMatch(/^Digests \(1\):\nweekly-travel-brief: /);
      expect(await h.command('/digest run nope')).toBe('No digest is named "nope"; /digest list shows them.');
      expect(await h.command('/digest pause Bad_Id!')).toBe(
        'No digest is named "bad_id!"; /digest list shows them.',
      );
      expect((await digestRuns(store.db)).map((r) => r.schedule_id)).toEqual([
        'markets-digest',
        'markets-digest',
      ]);
    });

    it('refuses a bad cron, zone or target with a one-line correction', async () => {
      const h = await start([]);
      const cases: Array<[string, RegExp]> = [
        [
          '/digest add "61 7 * * *" UTC here x',
          /^Not added: the cron expression "61 7 \* \* \*" is not valid .*e\.g\. "30 7 \* \* 1-5"/,
        ],
        ['/digest add "30 7 * *" UTC here x', /^Not added: the cron expression "30 7 \* \*" has 4 fields/],
        [
          '/digest add "30 7 * * *" Europe/Pari here x',
          /^Not added: "Europe\/Pari" is not a time zone; did you mean Europe\/Paris\?/,
        ],
        ['/digest add "30 7 * * *" UTC nowhere x', /^Not added: steward cannot post in test:nowhere/],
        ['/digest add "30 7 * * *" UTC here', /^Add where to post|^Add what to post/],
      ];
      for (const [text, expected] of cases) {
        const answer = await h.command(text);
        expect(answer, text).toMatch(expected);
        expect(answer, text).not.toContain('\n');
      }
      expect(await h.command('hello')).toBeUndefined();
      expect(await digestRuns(store.db)).toEqual([]);
      const count = await store.db.query<{ n: number }>('select count(*)::int as n from schedules');
      expect(count.rows[0]?.n).toBe(0);
    });

    it('syncs digests from the config file at start: added, updated in place, removed; chat pauses survive', async () => {
      const where = (id: string) => `steward.yaml line 3, key digests.${id}`;
      const config = {
        schedules: [
          {
            id: 'markets',
            cron: '30 7 * * 1-5',
            timezone: 'Europe/Paris',
            channel: 'test',
            room: 'markets-room',
            skill: 'markets-digest',
            where: where('markets'),
          },
          {
            id: 'travel',
            cron: '0 18 * * 5',
            timezone: 'Europe/Paris',
            channel: 'test',
            room: 'travel-room',
            prompt: 'Weekly travel brief.',
            where: where('travel'),
          },
        ],
      };
      const first = await start([reply('From the config file.'), reply('extra')], { config });
      await first.advance(6 * MINUTE);
      await posted('markets-room', 1);
      expect(await first.command('/digest remove markets')).toBe(
        'Digest markets comes from the config file; remove it there (here you can /digest pause markets).',
      );
      expect(await first.command('/digest pause travel')).toMatch(/^Paused digest travel\./);
      await stop(first);

      const [markets, travel] = config.schedules;
      const second = await start(undefined, {
        config: {
          schedules: [{ ...(markets as (typeof config.schedules)[0]), cron: '45 7 * * *' }, travel as never],
        },
      });
      const rows = await store.db.query(
        'select id, cron, source, paused, next_fire_at from schedules order by id',
      );
      expect(rows.rows).toEqual([
        {
          id: 'markets',
          cron: '45 7 * * *',
          source: 'config',
          paused: false,
          next_fire_at: new Date('2026-03-30T05:45:00Z'),
        },
        { id: 'travel', cron: '0 18 * * 5', source: 'config', paused: true, next_fire_at: expect.any(Date) },
      ]);
      await stop(second);

      await start(undefined, { config: { schedules: [travel as never] } });
      expect((await store.db.query('select id from schedules order by id')).rows).toEqual([{ id: 'travel' }]);

      await expect(
        start(undefined, {
          config: { schedules: [{ ...(markets as (typeof config.schedules)[0]), skill: 'no-such-skill' }] },
        }),
      ).rejects.toThrow(
        new ConfigError(
          'config: steward.yaml line 3, key digests.markets: no installed skill is named "no-such-skill"; use one of markets-digest, or give a prompt instead',
        ),
      );
    });
  },
);
