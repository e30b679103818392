import { ToolInputError } from '../types.ts';

/** Helpers shared by current_time and convert_time. Everything comes from Intl; no zone data of our own. */

/** A local wall-clock reading in some zone. */
export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: string;
}

/** A validated zone: the name as the caller wrote it (trimmed) and a formatter bound to it. */
export interface Zone {
  name: string;
  format: Intl.DateTimeFormat;
}

const EXAMPLES = 'Use an IANA name such as "Europe/Oslo" or "America/New_York".';

/**
 * The tzdb identifiers without a "/". ICU also accepts abbreviations such as "PST", "IST" or "BST"
 * (which it maps to Asia/Dhaka, not British Summer Time), so a name without a "/" must be one of these.
 */
const SINGLE_WORD_ZONES = new Set(
  [
    'CET',
    'CST6CDT',
    'Cuba',
    'EET',
    'EST',
    'EST5EDT',
    'Egypt',
    'Eire',
    'GB',
    'GB-Eire',
    'GMT',
    'GMT+0',
    'GMT-0',
    'GMT0',
    'Greenwich',
    'HST',
    'Hongkong',
    'Iceland',
    'Iran',
    'Israel',
    'Jamaica',
    'Japan',
    'Kwajalein',
    'Libya',
    'MET',
    'MST',
    'MST7MDT',
    'NZ',
    'NZ-CHAT',
    'Navajo',
    'PRC',
    'PST8PDT',
    'Poland',
    'Portugal',
    'ROC',
    'ROK',
    'Singapore',
    'Turkey',
    'UCT',
    'UTC',
    'Universal',
    'W-SU',
    'WET',
    'Zulu',
  ].map((zone) => zone.toLowerCase()),
);

/**
 * Validates an IANA zone name with Intl. Fixed offsets ("+05:30") are refused on purpose: the
 * place's zone name is what keeps DST right.
 */
export function resolveZone(input: string, field = 'time zone'): Zone {
  const name = input.trim();
  if (name === '') throw new ToolInputError(`The ${field} is empty. ${EXAMPLES}`);
  if (/^[+\-\u2212\d]/.test(name)) {
    throw new ToolInputError(
      `The ${field} "${name}" is a fixed UTC offset, not a zone name. ${EXAMPLES} Use "UTC" for UTC.`,
    );
  }
  const shown = name.length > 60 ? `${name.slice(0, 60)}…` : name;
  const label = field === 'time zone' ? 'time zone' : `${field} (time zone)`;
  if (!name.includes('/') && !SINGLE_WORD_ZONES.has(name.toLowerCase())) {
    throw new ToolInputError(
      `Unknown ${label} ${JSON.stringify(shown)}: abbreviations such as "PST" or "IST" are ambiguous and not accepted. ${EXAMPLES}`,
    );
  }
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      weekday: 'long',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    throw new ToolInputError(`Unknown ${label} ${JSON.stringify(shown)}. ${EXAMPLES}`);
  }
  return { name, format };
}

/** The local wall clock in `zone` at the instant `ms` (whole seconds). */
export function wallClock(zone: Zone, ms: number): WallClock {
  const parts: Record<string, string> = {};
  for (const part of zone.format.formatToParts(ms)) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: parts.weekday ?? '',
  };
}

/** Milliseconds since the epoch of a wall-clock reading taken as if it were UTC. Years 0-99 stay as given. */
export function utcMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

/** The zone's UTC offset in seconds at the instant `ms` (east of Greenwich is positive). */
export function offsetSeconds(zone: Zone, ms: number): number {
  const w = wallClock(zone, ms);
  const whole = Math.floor(ms / 1000) * 1000;
  return Math.round((utcMs(w.year, w.month, w.day, w.hour, w.minute, w.second) - whole) / 1000);
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** "+05:30", "-04:00", "+00:00"; seconds only when the offset has them (historic local mean time). */
export function formatOffset(seconds: number): string {
  const sign = seconds < 0 ? '-' : '+';
  const abs = Math.abs(seconds);
  const s = abs % 60;
  return `${sign}${pad(Math.floor(abs / 3600))}:${pad(Math.floor(abs / 60) % 60)}${s ? `:${pad(s)}` : ''}`;
}

/** "2 h", "5 h 30 min", "45 min". */
export function formatDuration(seconds: number): string {
  const minutes = Math.round(Math.abs(seconds) / 60);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  if (h && m) return `${h} h ${m} min`;
  return h ? `${h} h` : `${m} min`;
}

export function formatDate(w: Pick<WallClock, 'year' | 'month' | 'day'>): string {
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}`;
}

/** "14:05", or "14:05:09" when the seconds are not zero (or always, with `seconds`). */
export function formatClock(w: Pick<WallClock, 'hour' | 'minute' | 'second'>, seconds = false): string {
  const base = `${pad(w.hour)}:${pad(w.minute)}`;
  return seconds || w.second ? `${base}:${pad(w.second)}` : base;
}

export function isoLocal(w: WallClock, offset: number): string {
  return `${formatDate(w)}T${formatClock(w, true)}${formatOffset(offset)}`;
}

export function isoUtc(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
