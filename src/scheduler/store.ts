// The schedules table and the digest_runs audit trail. Times are always passed in, never read from
// the database clock, so a controlled clock drives every decision.
import type { Db } from '../store/db.ts';
import { storableJson } from '../store/storable.ts';

export interface Schedule {
  id: string;
  cron: string;
  timezone: string;
  channel: string;
  room: string;
  prompt: string;
  skill: string | null;
  paused: boolean;
  source: 'chat' | 'config';
  nextFireAt: Date | null;
  lastFiredAt: Date | null;
}

export interface LastRun {
  fireAt: Date;
  outcome: RunOutcome;
}

export type RunOutcome = 'running' | 'posted' | 'failed' | 'skipped' | 'interrupted';

export type ListedSchedule = Schedule & { lastRun?: LastRun };

interface ScheduleRow {
  id: string;
  cron: string;
  timezone: string;
  target_channel: string;
  target_room: string;
  prompt: string;
  skill: string | null;
  paused: boolean;
  source: 'chat' | 'config';
  next_fire_at: Date | null;
  last_fired_at: Date | null;
}

const COLUMNS =
  'id, cron, timezone, target_channel, target_room, prompt, skill, paused, source, next_fire_at, last_fired_at';

const toSchedule = (r: ScheduleRow): Schedule => ({
  id: r.id,
  cron: r.cron,
  timezone: r.timezone,
  channel: r.target_channel,
  room: r.target_room,
  prompt: r.prompt,
  skill: r.skill,
  paused: r.paused,
  source: r.source,
  nextFireAt: r.next_fire_at,
  lastFiredAt: r.last_fired_at,
});

export type NewSchedule = Omit<Schedule, 'paused' | 'lastFiredAt' | 'nextFireAt'> & { nextFireAt: Date };

export interface Claim {
  /** The digest_runs row of the run to start, when the claim includes one. */
  runId?: number;
}

export function digestStore(db: Db) {
  return {
    async list(): Promise<ListedSchedule[]> {
      const result = await db.query<
        ScheduleRow & { run_fire_at: Date | null; run_outcome: RunOutcome | null }
      >(
        `select s.id, s.cron, s.timezone, s.target_channel, s.target_room, s.prompt, s.skill, s.paused,
                s.source, s.next_fire_at, s.last_fired_at, r.fire_at as run_fire_at, r.outcome as run_outcome
         from schedules s
         left join lateral (select fire_at, outcome from digest_runs
                            where schedule_id = s.id order by id desc limit 1) r on true
         order by s.id`,
      );
      return result.rows.map((row) => ({
        ...toSchedule(row),
        ...(row.run_fire_at && row.run_outcome
          ? { lastRun: { fireAt: row.run_fire_at, outcome: row.run_outcome } }
          : {}),
      }));
    },

    async get(id: string): Promise<Schedule | undefined> {
      const result = await db.query<ScheduleRow>(`select ${COLUMNS} from schedules where id = $1`, [id]);
      return result.rows[0] ? toSchedule(result.rows[0]) : undefined;
    },

    async ids(): Promise<Set<string>> {
      const result = await db.query<{ id: string }>('select id from schedules');
      return new Set(result.rows.map((r) => r.id));
    },

    /** False when the id is taken. */
    async insert(s: NewSchedule): Promise<boolean> {
      const result = await db.query(
        `insert into schedules (id, cron, timezone, target_channel, target_room, prompt, skill, source, next_fire_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         on conflict (id) do nothing returning id`,
        [s.id, s.cron, s.timezone, s.channel, s.room, s.prompt, s.skill, s.source, s.nextFireAt],
      );
      return result.rows.length === 1;
    },

    /** A config entry: created, or updated in place (pause state kept; the next fire kept unless the timing changed). */
    async upsertFromConfig(s: NewSchedule): Promise<void> {
      await db.query(
        `insert into schedules (id, cron, timezone, target_channel, target_room, prompt, skill, source, next_fire_at)
         values ($1, $2, $3, $4, $5, $6, $7, 'config', $8)
         on conflict (id) do update set
           next_fire_at = case when schedules.cron = excluded.cron and schedules.timezone = excluded.timezone
                                 and schedules.next_fire_at is not null
                               then schedules.next_fire_at else excluded.next_fire_at end,
           cron = excluded.cron, timezone = excluded.timezone, target_channel = excluded.target_channel,
           target_room = excluded.target_room, prompt = excluded.prompt, skill = excluded.skill,
           source = 'config', updated_at = now()
         where (schedules.cron, schedules.timezone, schedules.target_channel, schedules.target_room,
                schedules.prompt, coalesce(schedules.skill, ''), schedules.source)
            is distinct from (excluded.cron, excluded.timezone, excluded.target_channel, excluded.target_room,
                excluded.prompt, coalesce(excluded.skill, ''), excluded.source)
            or schedules.next_fire_at is null`,
        [s.id, s.cron, s.timezone, s.channel, s.room, s.prompt, s.skill, s.nextFireAt],
      );
    },

    /** Config schedules no longer in the file; returns their ids. */
    async removeConfigExcept(keep: readonly string[]): Promise<string[]> {
      const result = await db.query<{ id: string }>(
        `delete from schedules where source = 'config' and not (id = any($1::text[])) returning id`,
        [keep],
      );
      return result.rows.map((r) => r.id);
    },

    /** Rows without a next fire (written before there was one) get it from `next`. */
    async withoutNextFire(): Promise<Schedule[]> {
      const result = await db.query<ScheduleRow>(
        `select ${COLUMNS} from schedules where next_fire_at is null and not paused`,
      );
      return result.rows.map(toSchedule);
    },

    async setNextFire(id: string, next: Date): Promise<void> {
      await db.query('update schedules set next_fire_at = $2 where id = $1 and next_fire_at is null', [
        id,
        next,
      ]);
    },

    async pause(id: string): Promise<boolean> {
      const result = await db.query(
        'update schedules set paused = true, updated_at = now() where id = $1 and not paused returning id',
        [id],
      );
      return result.rows.length === 1;
    },

    /** Resumes from `next`: fires while paused are not caught up. */
    async resume(id: string, next: Date): Promise<boolean> {
      const result = await db.query(
        'update schedules set paused = false, next_fire_at = $2, updated_at = now() where id = $1 and paused returning id',
        [id, next],
      );
      return result.rows.length === 1;
    },

    async remove(id: string): Promise<boolean> {
      const result = await db.query('delete from schedules where id = $1 returning id', [id]);
      return result.rows.length === 1;
    },

    /** Schedules on these channels whose next fire is at or before `at`. */
    async due(at: Date, channels: readonly string[]): Promise<string[]> {
      const result = await db.query<{ id: string }>(
        `select id from schedules
         where not paused and next_fire_at <= $1 and target_channel = any($2::text[])
         order by next_fire_at, id`,
        [at, channels],
      );
      return result.rows.map((r) => r.id);
    },

    /**
     * The row lease: moves the schedule from `expected` to `next` only if no one else did, and in the
     * same transaction records the skipped fires and the run about to start. At most one caller
     * (process, instance) gets a claim for a given `expected`.
     */
    async claim(input: {
      id: string;
      expected: Date;
      next: Date;
      fireAt?: Date;
      skipped?: { fireAt: Date; detail: string };
      at: Date;
    }): Promise<Claim | undefined> {
      return db.transaction(async (tx) => {
        const moved = await tx.query(
          `update schedules set next_fire_at = $3, last_fired_at = coalesce($4, last_fired_at)
           where id = $1 and next_fire_at = $2 and not paused returning id`,
          [input.id, input.expected, input.next, input.fireAt ?? null],
        );
        if (moved.rows.length === 0) return undefined;
        if (input.skipped) {
          await tx.query(
            `insert into digest_runs (schedule_id, fire_at, trigger, outcome, detail, started_at, finished_at, notified_at)
             values ($1, $2, 'schedule', 'skipped', $3, $4, $4, $4)`,
            [input.id, input.skipped.fireAt, input.skipped.detail, input.at],
          );
        }
        if (!input.fireAt) return {};
        const run = await tx.query<{ id: number }>(
          `insert into digest_runs (schedule_id, fire_at, trigger, outcome, started_at)
           values ($1, $2, 'schedule', 'running', $3) returning id`,
          [input.id, input.fireAt, input.at],
        );
        return { runId: run.rows[0]?.id as number };
      });
    },

    /** A run asked for with /digest run: no lease, the schedule's timing is untouched. */
    async startManualRun(id: string, at: Date): Promise<number> {
      const run = await db.query<{ id: number }>(
        `insert into digest_runs (schedule_id, fire_at, trigger, outcome, started_at)
         values ($1, $2, 'manual', 'running', $2) returning id`,
        [id, at],
      );
      return run.rows[0]?.id as number;
    },

    async finishRun(
      runId: number,
      result: {
        outcome: 'posted' | 'failed';
        sessionId: string | null;
        posted: number;
        messageIds: string[];
        detail: string | null;
        at: Date;
      },
    ): Promise<void> {
      await db.query(
        `update digest_runs set outcome = $2, session_id = $3, posted = $4, message_ids = $5,
                detail = $6, finished_at = $7,
                delivered_at = case when $2 = 'posted' and $4 > 0 then $7::timestamptz end
         where id = $1`,
        [
          runId,
          result.outcome,
          result.sessionId,
          result.posted,
          storableJson(result.messageIds),
          result.detail,
          result.at,
        ],
      );
    },

    /** Runs still marked running long after they started were cut off by a stop or a crash. */
    async markInterrupted(startedBefore: Date, at: Date): Promise<number> {
      const result = await db.query(
        `update digest_runs set outcome = 'interrupted', finished_at = $2,
                detail = 'steward stopped before the run finished; it was not retried'
         where outcome = 'running' and started_at < $1 returning id`,
        [startedBefore, at],
      );
      return result.rows.length;
    },

    /** Names the turn that will make the run's post, before it begins. */
    async linkTurn(runId: number, turnId: string): Promise<void> {
      await db.query('update digest_runs set turn_id = $2 where id = $1', [runId, turnId]);
    },

    /** The session a run's turn began in, once it has. */
    async sessionOfTurn(turnId: string): Promise<string | null> {
      const result = await db.query<{ session_id: string }>(
        `select session_id from session_events where turn_id = $1 and kind = 'user_message' limit 1`,
        [turnId],
      );
      return result.rows[0]?.session_id ?? null;
    },

    /**
     * Runs whose runner stopped with its process (still `running`, or `interrupted` at the next
     * start) but whose turn recovery resumed and ended: settled from the delivery ledger the turn's
     * end wrote, posted or failed, so the watchdog reports what happened and not a stuck run.
     */
    async settleResumed(at: Date): Promise<number> {
      const fromLedger = await db.query(
        `update digest_runs r
            set outcome = case when d.status = 'delivered' then 'posted' else 'failed' end,
                session_id = d.session_id,
                posted = case when d.status = 'delivered' then 1 else 0 end,
                message_ids = d.message_ids,
                detail = case when d.status = 'delivered' then null else d.error end,
                finished_at = $1,
                delivered_at = case when d.status = 'delivered' then d.created_at end
           from deliveries d
          where r.turn_id is not null and r.outcome in ('running', 'interrupted')
            and d.turn_id = r.turn_id and d.kind = 'digest'
          returning r.id`,
        [at],
      );
      const withoutPost = await db.query(
        `update digest_runs r
            set outcome = 'failed', session_id = e.session_id, finished_at = $1,
                detail = 'the turn resumed after a restart ended without a post'
           from session_events e
          where r.turn_id is not null and r.outcome in ('running', 'interrupted')
            and e.turn_id = r.turn_id and e.kind = 'turn_ended'
            and not exists (select 1 from deliveries d where d.turn_id = r.turn_id and d.kind = 'digest')
          returning r.id`,
        [at],
      );
      return fromLedger.rows.length + withoutPost.rows.length;
    },
  };
}

export type DigestStore = ReturnType<typeof digestStore>;
