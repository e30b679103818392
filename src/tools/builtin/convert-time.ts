import { type Tool, ToolInputError } from '../types.ts';
import {
  formatClock,
  formatDate,
  formatDuration,
  formatOffset,
  isoLocal,
  isoUtc,
  offsetSeconds,
  resolveZone,
  utcMs,
  type WallClock,
  wallClock,
  type Zone,
} from './zones.ts';

export type ConvertTimeArgs = {
  time: string;
  from_timezone: string;
  to_timezone: string;
};

const FORMATS =
  'Write the local wall-clock time in from_timezone as "YYYY-MM-DD HH:MM" (e.g. "2025-03-30 14:30"), ' +
  '"YYYY-MM-DDTHH:MM:SS" (e.g. "2025-03-30T14:30:00"), or "HH:MM" for today (e.g. "09:15"), 24-hour clock, ' +
  'with no offset or "Z": the zone goes in from_timezone.';

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{1,2}):(\d{2})(?::(\d{2}))?$/i;
const TIME_ONLY = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;

interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** True when the input was "HH:MM" and the date is today in the source zone. */
  today: boolean;
}

function parseTime(input: string, from: Zone, nowMs: number): LocalTime {
  const text = input.trim();
  const shown = JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
  let local: LocalTime;
  const full = DATE_TIME.exec(text);
  const short = full ? null : TIME_ONLY.exec(text);
  if (full) {
    const [, y, mo, d, h, mi, s] = full;
    local = {
      year: Number(y),
      month: Number(mo),
      day: Number(d),
      hour: Number(h),
      minute: Number(mi),
      second: Number(s ?? 0),
      today: false,
    };
  } else if (short) {
    const [, h, mi, s] = short;
    const today = wallClock(from, nowMs);
    local = {
      year: today.year,
      month: today.month,
      day: today.day,
      hour: Number(h),
      minute: Number(mi),
      second: Number(s ?? 0),
      today: true,
    };
  } else {
    throw new ToolInputError(`Cannot read the time ${shown}. ${FORMATS}`);
  }
  if (local.year < 1000)
    throw new ToolInputError(`The year in ${shown} must be from 1000 to 9999. ${FORMATS}`);
  if (local.month < 1 || local.month > 12) {
    throw new ToolInputError(`The month in ${shown} must be 01 to 12. ${FORMATS}`);
  }
  const daysInMonth = new Date(utcMs(local.year, local.month + 1, 0)).getUTCDate();
  if (local.day < 1 || local.day > daysInMonth) {
    throw new ToolInputError(
      `The date in ${shown} does not exist: ${local.year}-${String(local.month).padStart(2, '0')} has ${daysInMonth} days.`,
    );
  }
  if (local.hour > 23 || local.minute > 59 || local.second > 59) {
    throw new ToolInputError(
      `The clock time in ${shown} is out of range: hours 00-23, minutes and seconds 00-59. ${FORMATS}`,
    );
  }
  return local;
}

type Resolution =
  | { kind: 'normal'; ms: number }
  | { kind: 'gap'; ms: number; before: number; after: number }
  | { kind: 'overlap'; ms: number; later: number };

const DAY_MS = 86_400_000;

/**
 * Finds the instant(s) at which `zone` shows the wall-clock reading `localMs` (wall clock taken as
 * UTC). Candidate offsets are the zone's offsets a day either side and at the reading itself; an
 * instant is a solution when the zone's offset there maps it back onto the reading.
 *
 * Like Temporal's "compatible" disambiguation: a reading in a DST gap (which never shows on the
 * clock) is moved forward by the length of the gap, i.e. read with the offset from before the
 * change; a reading in an overlap (which shows twice) is the earlier of the two instants.
 */
function resolveLocal(zone: Zone, localMs: number): Resolution {
  const before = offsetSeconds(zone, localMs - DAY_MS);
  const after = offsetSeconds(zone, localMs + DAY_MS);
  const offsets = new Set([before, offsetSeconds(zone, localMs), after]);
  const solutions = [...offsets]
    .map((offset) => localMs - offset * 1000)
    .filter((ms) => offsetSeconds(zone, ms) * 1000 === localMs - ms)
    .sort((a, b) => a - b);
  const [first, second] = solutions;
  if (first === undefined) return { kind: 'gap', ms: localMs - before * 1000, before, after };
  if (second !== undefined && second !== first) return { kind: 'overlap', ms: first, later: second };
  return { kind: 'normal', ms: first };
}

function dayDifference(a: WallClock, b: WallClock): number {
  return Math.round((utcMs(b.year, b.month, b.day) - utcMs(a.year, a.month, a.day)) / DAY_MS);
}

function dateChange(days: number, to: Zone): string {
  if (days === 0) return 'same date';
  const n = Math.abs(days);
  const words =
    n === 1
      ? days > 0
        ? 'the next day'
        : 'the previous day'
      : `${n} days ${days > 0 ? 'later' : 'earlier'}`;
  return `date change: ${words} in ${to.name} (${days > 0 ? '+' : '-'}${n} day${n === 1 ? '' : 's'})`;
}

function describe(w: WallClock, zone: Zone, offset: number): string {
  return `${w.weekday} ${formatDate(w)} ${formatClock(w)} in ${zone.name} (UTC${formatOffset(offset)})`;
}

export const convertTimeTool: Tool<ConvertTimeArgs> = {
  name: 'convert_time',
  description: [
    'Converts a local wall-clock time in one time zone to the local time in another, using the real',
    'IANA rules for that date (daylight saving included). Returns both local times with weekday and UTC',
    'offset, both as ISO 8601, the UTC instant, how far apart the zones are, and whether the date changes.',
    'Use it for questions like "what is 15:00 in Oslo in New York time" or scheduling across zones; never',
    'do the offset arithmetic yourself. For the current time use current_time.',
    'Arguments: time is the local time in from_timezone as "YYYY-MM-DD HH:MM", "YYYY-MM-DDTHH:MM[:SS]" or',
    '"HH:MM" (24-hour clock; "HH:MM" means today\'s date in from_timezone), with no offset or "Z".',
    'from_timezone and to_timezone are IANA names such as "Europe/Berlin", "America/New_York", "UTC".',
    'Edge cases: a time that does not exist because clocks jump forward (DST gap, e.g. 02:30 in',
    'Europe/Berlin on 2025-03-30) is moved forward by the length of the gap (read as 03:30) and the result',
    'says so; a time that happens twice because clocks go back (DST overlap) uses the first occurrence and',
    'the result also gives the second. Unknown zones and unreadable times are errors that say how to fix them.',
    'Example call: {"time": "2025-03-28 10:00", "from_timezone": "Europe/Berlin", "to_timezone":',
    '"America/New_York"} gives Friday 2025-03-28 05:00 in America/New_York (UTC-04:00).',
  ].join(' '),
  inputSchema: {
    type: 'object',
    properties: {
      time: {
        type: 'string',
        minLength: 1,
        maxLength: 40,
        description:
          'Local wall-clock time in from_timezone: "YYYY-MM-DD HH:MM", "YYYY-MM-DDTHH:MM:SS", or "HH:MM" for today. 24-hour clock, no offset.',
      },
      from_timezone: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        description: 'IANA zone the given time is in, e.g. "Europe/Berlin".',
      },
      to_timezone: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        description: 'IANA zone to convert to, e.g. "America/New_York".',
      },
    },
    required: ['time', 'from_timezone', 'to_timezone'],
    additionalProperties: false,
  },
  trusted: true,
  async execute(args, ctx) {
    const from = resolveZone(args.from_timezone, 'from_timezone');
    const to = resolveZone(args.to_timezone, 'to_timezone');
    const local = parseTime(args.time, from, ctx.now().getTime());
    const localMs = utcMs(local.year, local.month, local.day, local.hour, local.minute, local.second);
    const resolved = resolveLocal(from, localMs);
    const ms = resolved.ms;

    const fromWall = wallClock(from, ms);
    const fromOffset = offsetSeconds(from, ms);
    const toWall = wallClock(to, ms);
    const toOffset = offsetSeconds(to, ms);

    const lines = [
      `From: ${describe(fromWall, from, fromOffset)}`,
      `To:   ${describe(toWall, to, toOffset)}`,
      `ISO 8601: ${isoLocal(fromWall, fromOffset)} = ${isoLocal(toWall, toOffset)} = ${isoUtc(ms)}`,
    ];

    const gap = toOffset - fromOffset;
    const apart =
      gap === 0
        ? `${to.name} and ${from.name} show the same clock time at that moment`
        : `${to.name} is ${formatDuration(gap)} ${gap > 0 ? 'ahead of' : 'behind'} ${from.name} at that moment`;
    const days = dayDifference(fromWall, toWall);
    lines.push(`${apart}; ${dateChange(days, to)}.`);

    const asked = `${formatDate(local)} ${formatClock(local)}`;
    if (local.today)
      lines.push(`"${args.time.trim()}" was read as today in ${from.name}: ${formatDate(fromWall)}.`);
    if (resolved.kind === 'gap') {
      lines.push(
        `Note: ${asked} does not exist in ${from.name} (the clocks jump forward there, UTC${formatOffset(resolved.before)} to ` +
          `UTC${formatOffset(resolved.after)}). It was read as ${formatClock(fromWall)}, moved forward by the ${formatDuration(resolved.after - resolved.before)} gap.`,
      );
    } else if (resolved.kind === 'overlap') {
      const laterFrom = wallClock(from, resolved.later);
      const laterTo = wallClock(to, resolved.later);
      lines.push(
        `Note: ${asked} happens twice in ${from.name} (the clocks go back). The first occurrence ` +
          `(UTC${formatOffset(fromOffset)}) was used; the second (UTC${formatOffset(offsetSeconds(from, resolved.later))}) ` +
          `is ${isoLocal(laterFrom, offsetSeconds(from, resolved.later))} = ${isoLocal(laterTo, offsetSeconds(to, resolved.later))}.`,
      );
    }
    return lines.join('\n');
  },
};
