// Cron expressions and time zones: what steward accepts, and when an accepted schedule fires.
// Pure functions over cron-parser, the same parser pg-boss evaluates schedules with.
import { createRequire } from 'node:module';

// cron-parser (with luxon, a large module) loads at the first schedule parsed: a steward
// without digests never loads it, not even to read its configuration.
const require = createRequire(import.meta.url);
const parser = (): typeof import('cron-parser').CronExpressionParser =>
  (require('cron-parser') as typeof import('cron-parser')).CronExpressionParser;

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

export const CRON_HINT =
  'use five fields (minute hour day-of-month month day-of-week) in quotes, e.g. "30 7 * * 1-5" for 07:30 on weekdays';
export const ZONE_HINT = 'use an IANA time zone such as Europe/Paris, America/New_York or UTC';

/** Five fields, minute resolution; returned with single spaces so equal schedules compare equal. */
export function checkCron(expression: string): Checked<string> {
  const fields = expression.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5) {
    const counted =
      fields.length === 0 ? 'is empty' : `has ${fields.length} field${fields.length === 1 ? '' : 's'}`;
    return { ok: false, problem: `the cron expression "${expression.trim()}" ${counted}; ${CRON_HINT}` };
  }
  const normal = fields.join(' ');
  try {
    parser().parse(normal, { tz: 'UTC', strict: false }).next();
  } catch (error) {
    const reason = ((error as Error).message.split('\n')[0] ?? '').replace(/\.$/, '');
    return { ok: false, problem: `the cron expression "${normal}" is not valid (${reason}); ${CRON_HINT}` };
  }
  return { ok: true, value: normal };
}

const ZONE_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** An IANA zone name, spelled as the zone list spells it where it is there (europe/paris → Europe/Paris). */
export function checkZone(zone: string): Checked<string> {
  if (ZONE_SHAPE.test(zone)) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      const listed = [...Intl.supportedValuesOf('timeZone'), 'UTC'].find(
        (z) => z.toLowerCase() === zone.toLowerCase(),
      );
      return { ok: true, value: listed ?? zone };
    } catch {
      // not a zone this runtime knows; fall through to the suggestion
    }
  }
  const guess = closestZone(zone);
  const suggestion = guess ? `did you mean ${guess}? ` : '';
  return { ok: false, problem: `"${zone}" is not a time zone; ${suggestion}${ZONE_HINT}` };
}

function closestZone(input: string): string | undefined {
  const zones = [...Intl.supportedValuesOf('timeZone'), 'UTC'];
  const wanted = input.toLowerCase();
  const byCity = zones.find((z) => z.toLowerCase().endsWith(`/${wanted}`));
  if (byCity) return byCity;
  let best: { zone: string; distance: number } | undefined;
  for (const zone of zones) {
    const distance = editDistance(wanted, zone.toLowerCase());
    if (!best || distance < best.distance) best = { zone, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(wanted.length / 5)) ? best.zone : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The first fire strictly after `after`. */
export function nextFire(cron: string, zone: string, after: Date): Date {
  return parser().parse(cron, { tz: zone, strict: false, currentDate: after }).next().toDate();
}

/** The last fire at or before `at`, or undefined when the expression never fired before it. */
export function latestFire(cron: string, zone: string, at: Date): Date | undefined {
  // prev() answers strictly before its reference, so a fire exactly at `at` needs the extra millisecond.
  const interval = parser().parse(cron, {
    tz: zone,
    strict: false,
    currentDate: new Date(at.getTime() + 1),
  });
  return interval.hasPrev() ? interval.prev().toDate() : undefined;
}

/** How many fires fall in [from, to], counting at most `cap`. */
export function countFires(cron: string, zone: string, from: Date, to: Date, cap: number): number {
  const interval = parser().parse(cron, {
    tz: zone,
    strict: false,
    currentDate: new Date(from.getTime() - 1),
  });
  let count = 0;
  while (count < cap && interval.next().toDate().getTime() <= to.getTime()) count++;
  return count;
}

/** A fire time as the owner reads it, in the schedule's zone: "Mon 30 Mar, 07:30". */
export function formatFire(at: Date, zone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(at);
}
