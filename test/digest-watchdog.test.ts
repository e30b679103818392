// The digest watchdog on the real scheduler (lease engine, PGlite) with a controlled clock: a
// digest whose model call fails, one whose post the channel rejects, and one whose process died
// mid-run each produce exactly one notice to the owner; a healthy digest produces none.

import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OutboundEvent, ReplySink } from '../src/channel/port.ts';
import { UNATTENDED_SENDER } from '../src/core/core.ts';
import { watchdogText } from '../src/scheduler/watchdog.ts';
import type { Db } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { sessionLog } from '../src/store/session-log.ts';
import {
  type DigestHarness,
  type DigestHarnessOptions,
  recordingOutboxes,
  startDigestHarness,
  TestClock,
} from './support/scheduler-harness.ts';
import { reply, type ScriptedModel, type ScriptStep, startScriptedModel } from './support/scripted-model.ts';
import { embeddedBackend } from './support/services.ts';

const MINUTE = 60_000;
const MONDAY_0725 = new Date('2026-03-30T05:25:00Z');
const ADD = (room: string) => `/digest add "30 7 * * 1-5" Europe/Paris ${room} markets-digest`;

describe('the digest watchdog', () => {
  let db: Db;
  let cleanup: () => Promise<void>;
  let model: ScriptedModel | undefined;
  let h: DigestHarness | undefined;
  let clock: TestClock;
  beforeEach(async () => {
    ({ db, cleanup } = await embeddedBackend.open());
    await migrate(db);
    clock = new TestClock(MONDAY_0725);
  });
  afterEach(async () => {
    await h?.stop();
    h = undefined;
    await model?.close();
    model = undefined;
    await cleanup();
  });

  /** A steward on the scripted model with the 07:30 digest added; `wrap` changes its outboxes. */
  async function started(
    script: ScriptStep[],
    wrap: (
      outboxFor: ReturnType<typeof recordingOutboxes>['outboxFor'],
    ) => DigestHarnessOptions['outboxFor'] = (o) => o,
  ) {
    model = await startScriptedModel(script);
    const out = recordingOutboxes();
    h = await startDigestHarness({
      db,
      modelUrl: model.baseUrl,
      clock,
      outboxFor: wrap(out.outboxFor),
      ownerSink: out.ownerSink,
      engine: 'lease',
      graceMs: 10 * MINUTE,
    });
    expect(await h.command(ADD('here'), 'test', 'markets-room')).toMatch(/^Added digest markets-digest/);
    return { out, h, model };
  }

  async function run(script: ScriptStep[], rejectPosts = false) {
    const { out, h } = await started(script, (outboxFor) => (channel, room): ReplySink | undefined => {
      const sink = outboxFor(channel, room);
      if (!rejectPosts || !sink) return sink;
      return async (event: OutboundEvent) => {
        if (event.type === 'reply') throw new Error('Bad Request: chat not found');
        await sink(event);
      };
    });
    await h.advance(6 * MINUTE); // 07:31: the 07:30 fire has run
    await h.advance(30 * MINUTE); // far past the grace: the watchdog has looked many times
    await h.scheduler.watchdog();
    return out;
  }
  const aboutDigest = (notices: string[]) => notices.filter((n) => n.includes('markets-digest'));

  it('a healthy digest produces no notice', async () => {
    const out = await run([reply('Markets: calm.')]);
    expect(out.posts('test', 'markets-room')).toEqual(['Markets: calm.']);
    expect(aboutDigest(out.ownerNotices('test'))).toEqual([]);
    const delivered = await db.query<{ delivered_at: Date | null }>('select delivered_at from digest_runs');
    expect(delivered.rows[0]?.delivered_at).toBeInstanceOf(Date);
  });

  it('a digest whose model call fails produces exactly one notice', async () => {
    const out = await run([{ status: 500, body: { error: { message: 'overloaded' } } }]);
    expect(out.posts('test', 'markets-room')).toEqual([]);
    const notices = aboutDigest(out.ownerNotices('test'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/^Digest markets-digest .* failed/);
  });

  it('a digest whose post the channel rejects produces exactly one notice', async () => {
    const out = await run([reply('Markets: calm.')], true);
    const notices = aboutDigest(out.ownerNotices('test'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/chat not found/);
  });

  /**
   * What a steward killed during the 07:30 run leaves: the schedule moved on, the run "running"
   * (naming its turn when `turnId` is given). Returns the outboxes of the steward started after.
   */
  async function killedDuringRun(script: ScriptStep[], turnId: string | null = null) {
    const { out, h } = await started(script);
    await db.query("update schedules set next_fire_at = '2026-03-31T05:30:00Z'");
    await db.query(
      `insert into digest_runs (schedule_id, fire_at, trigger, outcome, started_at, turn_id)
       values ('markets-digest', '2026-03-30T05:30:00Z', 'schedule', 'running', '2026-03-30T05:30:01Z', $1)`,
      [turnId],
    );
    return { out, h };
  }

  it('a run left behind by a process killed mid-run produces exactly one notice', async () => {
    const { out, h } = await killedDuringRun([]);
    await h.advance(20 * MINUTE);
    await h.advance(20 * MINUTE);
    await h.scheduler.watchdog();
    const notices = aboutDigest(out.ownerNotices('test'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/has not finished \(stuck, or steward was stopped mid-run\)/);
  });

  /**
   * The same kill during the run's turn: the turn begun in its room and not ended. The restarted
   * steward's recovery resumes the turn, which knows nothing of the run.
   */
  async function resumedAfterKill(script: ScriptStep[]) {
    const turnId = randomUUID();
    const { out, h } = await killedDuringRun(script, turnId);
    const sessions = sessionLog(db);
    const session = await sessions.startFresh('test', 'markets-room');
    await sessions.append(
      session.id,
      { kind: 'user_message', text: 'markets', sender: UNATTENDED_SENDER },
      turnId,
    );
    await h.assistant.recover(out.outboxFor);
    await h.advance(20 * MINUTE);
    await h.advance(20 * MINUTE);
    await h.scheduler.watchdog();
    const run = await db.query<{ outcome: string; session_id: string | null; delivered_at: Date | null }>(
      'select outcome, session_id, delivered_at from digest_runs',
    );
    return { out, run: run.rows[0], sessionId: session.id };
  }

  it('a run whose turn was resumed after a restart and posted is settled as posted, with no notice', async () => {
    const { out, run, sessionId } = await resumedAfterKill([reply('Markets: calm.')]);
    expect(out.posts('test', 'markets-room')).toEqual(['Markets: calm.']);
    expect(run).toMatchObject({ outcome: 'posted', session_id: sessionId });
    expect(run?.delivered_at).toBeInstanceOf(Date);
    expect(aboutDigest(out.ownerNotices('test'))).toEqual([]);
    expect(await h?.scheduler.status()).toEqual([expect.stringMatching(/: posted, delivered$/)]);
  });

  it('a run whose resumed turn failed is reported once as failed, not as stuck', async () => {
    const { out, run } = await resumedAfterKill([
      { status: 500, body: { error: { message: 'overloaded' } } },
    ]);
    expect(out.posts('test', 'markets-room')).toEqual([]);
    expect(run?.outcome).toBe('failed');
    const notices = aboutDigest(out.ownerNotices('test'));
    expect(notices).toEqual([
      expect.stringMatching(/failed \(the turn resumed after a restart ended without a post\)/),
    ]);
  });

  it('a digest turn a stop cuts off leaves its run running, with no notice, for the next start', async () => {
    const { out, h: steward, model: held } = await started([{ chunks: ['Markets: '], hold: true }]);
    await clock.tick(6 * MINUTE); // 07:31: the 07:30 turn is streaming and the model holds
    for (let i = 0; i < 200 && held.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(held.requests).toHaveLength(1);
    await steward.assistant.stop();
    await steward.stop();
    h = undefined;
    const runs = await db.query<{ outcome: string; notified_at: Date | null }>(
      'select outcome, notified_at from digest_runs',
    );
    expect(runs.rows).toEqual([{ outcome: 'running', notified_at: null }]);
    expect(aboutDigest(out.ownerNotices('test'))).toEqual([]);
  });

  it('words each outcome for the owner', () => {
    const base = {
      id: 1,
      scheduleId: 'd1',
      channel: 'test',
      timezone: 'UTC',
      fireAt: new Date('2026-03-30T07:30:00Z'),
      detail: 'the model failed',
      startedAt: new Date('2026-03-30T07:30:00Z'),
      posted: 0,
    };
    const now = new Date('2026-03-30T08:00:00Z');
    expect(watchdogText({ ...base, outcome: 'failed' }, now)).toMatch(/failed \(the model failed\)/);
    expect(watchdogText({ ...base, outcome: 'skipped' }, now)).toMatch(/was skipped/);
    expect(watchdogText({ ...base, outcome: 'interrupted' }, now)).toMatch(/\/digest run d1/);
    expect(watchdogText({ ...base, outcome: 'running' }, now)).toMatch(/started 30 min ago/);
    expect(watchdogText({ ...base, outcome: 'posted', posted: 1 }, now)).toMatch(/never confirmed delivery/);
  });
});
