import { type DestinationStream, type Logger, pino } from 'pino';
import { redact } from './config/secrets.ts';

export type { Logger };

// Field names that hold secrets wherever they appear in a logged object.
const SECRET_PATHS = [
  'token',
  'apiKey',
  'accessToken',
  'password',
  'databaseUrl',
  'authorization',
  '*.token',
  '*.apiKey',
  '*.accessToken',
  '*.password',
  '*.databaseUrl',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
];

/**
 * Logs go to stderr (stdout belongs to the console channel's replies). Secrets are removed twice:
 * by field name, and by value from every finished line, so a token quoted inside an error message
 * is caught too.
 */
export function createLogger(
  level: string,
  secrets: readonly string[],
  destination: DestinationStream = pino.destination(2),
): Logger {
  // Values are looked for as written and as they appear inside a JSON string (once or twice
  // escaped, for a JSON body logged as a string field); redact() takes the longest first.
  const jsonEscape = (s: string): string => JSON.stringify(s).slice(1, -1);
  const needles = [
    ...new Set(
      secrets.filter((s) => s.length > 0).flatMap((s) => [s, jsonEscape(s), jsonEscape(jsonEscape(s))]),
    ),
  ];
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: SECRET_PATHS, censor: '[redacted]' },
      hooks: {
        streamWrite: (line) => redact(line, needles),
      },
    },
    destination,
  );
}
