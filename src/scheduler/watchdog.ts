// The digest watchdog: a fire that was due and has no delivered post within the grace period
// (it failed, was skipped, got stuck, was cut off by a restart, or was posted but not delivered)
// is reported to the owner once, naming the digest and what happened. The runner reports the
// failures it sees itself and marks them, so each fire gets exactly one notice, from one place or
// the other; the conditional update makes it one across stewards sharing the database.
import type { ReplySink } from '../channel/port.ts';
import type { Logger } from '../log.ts';
import type { Db } from '../store/db.ts';
import { formatFire } from './cron.ts';
import { digestStore, type RunOutcome } from './store.ts';

export interface UnreportedRun {
  id: number;
  scheduleId: string;
  channel: string | null;
  timezone: string;
  fireAt: Date;
  outcome: RunOutcome;
  detail: string | null;
  startedAt: Date;
  posted: number;
}

/** What the owner is told about one undelivered fire. Pure. */
export function watchdogText(run: UnreportedRun, now: Date): string {
  const when = `${formatFire(run.fireAt, run.timezone)} (${run.timezone})`;
  const head = `Digest ${run.scheduleId} due at ${when} was not delivered`;
  switch (run.outcome) {
    case 'failed':
      return `${head}: it failed (${run.detail ?? 'no reason recorded'}).`;
    case 'skipped':
      return `${head}: it was skipped (${run.detail ?? 'no reason recorded'}).`;
    case 'interrupted':
      return `${head}: steward stopped while it ran, and it was not run again. Use /digest run ${run.scheduleId} to run it now.`;
    case 'running': {
      const minutes = Math.round((now.getTime() - run.startedAt.getTime()) / 60_000);
      return `${head}: it started ${minutes} min ago and has not finished (stuck, or steward was stopped mid-run).`;
    }
    case 'posted':
      return `${head}: it was posted ${run.posted} time(s), but the channel never confirmed delivery.`;
  }
}

export function digestWatchdog(deps: {
  db: Db;
  log: Logger;
  now: () => Date;
  graceMs: number;
  ownerSink(channel: string): ReplySink | undefined;
}) {
  const { db, log } = deps;
  return {
    /** Reports every fire past its grace without a delivered post; returns how many it reported. */
    async check(): Promise<number> {
      const now = deps.now();
      // A run whose turn was resumed after a restart is judged by how that turn ended.
      await digestStore(db).settleResumed(now);
      let reported = 0;
      for (const run of await unreported(db, new Date(now.getTime() - deps.graceMs))) {
        const sink = run.channel ? deps.ownerSink(run.channel) : undefined;
        if (!sink) continue; // another steward, the one that runs this channel, reports it
        if (!(await claimNotice(db, run.id, now))) continue;
        reported++;
        await Promise.resolve(sink({ type: 'notice', level: 'error', text: watchdogText(run, now) })).catch(
          (error: Error) => log.error({ err: error, digest: run.scheduleId }, 'could not report a digest'),
        );
      }
      return reported;
    },
  };
}

/** Marks a run as reported to the owner; false when someone reported it first. */
export async function claimNotice(db: Db, runId: number, at: Date): Promise<boolean> {
  const marked = await db.query(
    'update digest_runs set notified_at = $2 where id = $1 and notified_at is null returning id',
    [runId, at],
  );
  return marked.rows.length > 0;
}

async function unreported(db: Db, dueBefore: Date): Promise<UnreportedRun[]> {
  const rows = await db.query<{
    id: number;
    schedule_id: string;
    channel: string | null;
    timezone: string | null;
    fire_at: Date;
    outcome: RunOutcome;
    detail: string | null;
    started_at: Date;
    posted: number;
  }>(
    `select r.id, r.schedule_id, s.target_channel as channel, s.timezone, r.fire_at, r.outcome, r.detail,
            r.started_at, r.posted
     from digest_runs r left join schedules s on s.id = r.schedule_id
     where r.fire_at <= $1 and r.delivered_at is null and r.notified_at is null
     order by r.fire_at, r.id`,
    [dueBefore],
  );
  return rows.rows.map((r) => ({
    id: r.id,
    scheduleId: r.schedule_id,
    channel: r.channel,
    timezone: r.timezone ?? 'UTC',
    fireAt: new Date(r.fire_at),
    outcome: r.outcome,
    detail: r.detail,
    startedAt: new Date(r.started_at),
    posted: r.posted,
  }));
}
