// What a schedule owes when it is looked at: nothing yet, one run, and/or a notice about fires
// that are too old to run. Pure, so every case of downtime is a row in a table test.
import { countFires, latestFire, nextFire } from './cron.ts';

/** One hour: a fire missed by less than this still runs, once; older ones are skipped with a notice. */
export const DEFAULT_CATCH_UP_MS = 60 * 60 * 1000;

/** Counting stops here; a notice then says "at least". */
const COUNT_CAP = 1000;

export interface MissedFires {
  count: number;
  /** True when there were more than `count`. */
  more: boolean;
  first: Date;
  last: Date;
}

export type FireDecision =
  /** The schedule's next fire is still ahead. */
  | { due: false }
  /**
   * Move the schedule on to `next`. Run `fireAt` (the latest fire, when it is within the catch-up
   * window); tell the owner about `missed` (fires older than the window, never run).
   */
  | { due: true; next: Date; fireAt?: Date; missed?: MissedFires };

export interface ScheduleTiming {
  cron: string;
  timezone: string;
  /** The earliest fire not yet handled. */
  nextFireAt: Date;
}

/**
 * Fires from `nextFireAt` up to `at` are due. The latest of them runs if it is at most `windowMs`
 * old, standing in for any others inside the window (a digest is about now, so one post is
 * enough); fires older than the window are skipped and reported.
 */
export function decideFire(schedule: ScheduleTiming, at: Date, windowMs: number): FireDecision {
  const { cron, timezone, nextFireAt } = schedule;
  if (nextFireAt.getTime() > at.getTime()) return { due: false };
  const next = nextFire(cron, timezone, at);
  const latest = latestFire(cron, timezone, at);
  // Nothing fired since nextFireAt (it was not itself a fire, e.g. the expression changed): realign.
  if (!latest || latest.getTime() < nextFireAt.getTime()) return { due: true, next };

  const cutoff = new Date(at.getTime() - windowMs);
  const inWindow = latest.getTime() >= cutoff.getTime();
  const lastTooOld = inWindow ? latestFire(cron, timezone, new Date(cutoff.getTime() - 1)) : latest;
  const missed =
    lastTooOld && lastTooOld.getTime() >= nextFireAt.getTime()
      ? missedBetween(cron, timezone, nextFireAt, lastTooOld)
      : undefined;
  return {
    due: true,
    next,
    ...(inWindow ? { fireAt: latest } : {}),
    ...(missed ? { missed } : {}),
  };
}

function missedBetween(cron: string, timezone: string, from: Date, last: Date): MissedFires {
  const first =
    latestFire(cron, timezone, from)?.getTime() === from.getTime() ? from : nextFire(cron, timezone, from);
  const count = countFires(cron, timezone, first, last, COUNT_CAP + 1);
  return { count: Math.min(count, COUNT_CAP), more: count > COUNT_CAP, first, last };
}
