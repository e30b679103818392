import type { Tool } from '../types.ts';
import {
  formatClock,
  formatDate,
  formatOffset,
  isoLocal,
  isoUtc,
  offsetSeconds,
  resolveZone,
  wallClock,
} from './zones.ts';

export const currentTimeTool: Tool<{ timezone?: string }> = {
  name: 'current_time',
  description: [
    'Returns the current date and time in one time zone: weekday, local date and time, the UTC offset,',
    'the ISO 8601 local time with offset, and the same instant in UTC.',
    'Use it whenever the answer depends on "now" (today\'s date, the weekday, what time it is somewhere,',
    'how long until a date): never guess the current time.',
    'Argument: timezone (optional) is an IANA zone name such as "Europe/Oslo", "America/New_York",',
    '"Asia/Kolkata" or "UTC"; it defaults to UTC. Use the place\'s zone: abbreviations like "PST" or "IST"',
    'and fixed offsets like "+05:30" are refused. An unknown name is an error that says so.',
    'To turn a given time in one zone into another zone, use convert_time instead.',
    'Example call: {"timezone": "Asia/Tokyo"} returns e.g.',
    '"Monday 2025-06-02 18:30:00 in Asia/Tokyo (UTC+09:00)\\nISO 8601: 2025-06-02T18:30:00+09:00\\nUTC: 2025-06-02T09:30:00Z".',
  ].join(' '),
  inputSchema: {
    type: 'object',
    properties: {
      timezone: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        description: 'IANA time zone name, e.g. "Europe/Berlin" or "America/Los_Angeles". Defaults to "UTC".',
      },
    },
    required: [],
    additionalProperties: false,
  },
  trusted: true,
  async execute(args, ctx) {
    const zone = resolveZone(args.timezone ?? 'UTC');
    const ms = ctx.now().getTime();
    const w = wallClock(zone, ms);
    const offset = offsetSeconds(zone, ms);
    return [
      `${w.weekday} ${formatDate(w)} ${formatClock(w, true)} in ${zone.name} (UTC${formatOffset(offset)})`,
      `ISO 8601: ${isoLocal(w, offset)}`,
      `UTC: ${isoUtc(ms)}`,
    ].join('\n');
  },
};
