import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { secretValues } from '../src/config/secrets.ts';
import { createLogger, type Logger } from '../src/log.ts';

interface Capture {
  log: Logger;
  /** Every line written so far, raw. */
  lines(): string[];
}

/** A destination that is a plain object with write(line). */
function objectCapture(level: string, secrets: readonly string[]): Capture {
  const lines: string[] = [];
  const log = createLogger(level, secrets, { write: (line: string) => void lines.push(line) });
  return { log, lines: () => lines };
}

/** A destination that is a real stream. */
function streamCapture(level: string, secrets: readonly string[]): Capture {
  const stream = new PassThrough({ encoding: 'utf8' });
  const log = createLogger(level, secrets, stream);
  let text = '';
  return {
    log,
    lines: () => {
      for (let chunk = stream.read(); chunk !== null; chunk = stream.read()) text += chunk;
      return text.split(/(?<=\n)/).filter(Boolean);
    },
  };
}

const destinations = [
  ['object destination', objectCapture],
  ['PassThrough destination', streamCapture],
] as const;

function parsed(capture: Capture): Array<Record<string, unknown>> {
  return capture.lines().map((line) => {
    expect(line.endsWith('\n')).toBe(true);
    return JSON.parse(line) as Record<string, unknown>;
  });
}

/** The value at a dotted path of a parsed line. */
function at(entry: unknown, path: string): unknown {
  let node = entry;
  for (const key of path.split('.')) node = (node as Record<string, unknown> | undefined)?.[key];
  return node;
}

describe.each(destinations)('createLogger with a %s', (_label, capture) => {
  describe('censors secret field names', () => {
    it.each([
      ['token', { token: 'field-value-1' }, 'token'],
      ['apiKey', { apiKey: 'field-value-2' }, 'apiKey'],
      ['accessToken', { accessToken: 'field-value-3' }, 'accessToken'],
      ['authorization', { authorization: 'Bearer field-value-4' }, 'authorization'],
      ['password', { password: 'field-value-5' }, 'password'],
      ['databaseUrl', { databaseUrl: 'postgres://u:p@h/field-value-6' }, 'databaseUrl'],
      ['nested token', { telegram: { token: 'field-value-7' } }, 'telegram.token'],
      ['nested apiKey', { model: { apiKey: 'field-value-8' } }, 'model.apiKey'],
      [
        'nested authorization',
        { request: { authorization: 'Bearer field-value-9' } },
        'request.authorization',
      ],
      ['nested password', { db: { password: 'field-value-10' } }, 'db.password'],
      [
        'headers.authorization',
        { headers: { authorization: 'Bearer field-value-11' } },
        'headers.authorization',
      ],
      [
        'nested headers.authorization',
        { req: { headers: { authorization: 'Bearer field-value-12' } } },
        'req.headers.authorization',
      ],
    ])('%s', (_name, fields, path) => {
      // The logger does not know these values: only the field name can hide them.
      const c = capture('info', []);
      c.log.info(fields, 'with a secret field');
      const [line] = c.lines();
      expect(line).toBeDefined();
      expect(line).not.toContain('field-value');
      const [entry] = parsed(c);
      expect(at(entry, path)).toBe('[redacted]');
      expect(entry?.msg).toBe('with a secret field');
    });

    it('leaves other fields alone', () => {
      const c = capture('info', []);
      c.log.info({ user: 'alice', count: 3, nested: { tokenCount: 5 } }, 'plain');
      expect(parsed(c)).toEqual([
        expect.objectContaining({
          level: 30,
          user: 'alice',
          count: 3,
          nested: { tokenCount: 5 },
          msg: 'plain',
        }),
      ]);
    });
  });

  describe('redacts secret values wherever they appear', () => {
    const secret = 'tg-123456:AAE-secret-token';
    it.each([
      ['in the message', (log: Logger) => log.info(`connecting with ${secret} now`)],
      ['in a format argument', (log: Logger) => log.info('connecting with %s now', secret)],
      ['twice in the message', (log: Logger) => log.warn(`${secret} and again ${secret}`)],
      ['in an unnamed field', (log: Logger) => log.info({ url: `https://api/bot${secret}/getMe` }, 'fetch')],
      ['in a deeply nested field', (log: Logger) => log.info({ a: { b: { c: secret } } }, 'deep')],
      ['in an error message', (log: Logger) => log.error(new Error(`401 for ${secret}`), 'failed')],
      ['in an err field', (log: Logger) => log.error({ err: new Error(`401 for ${secret}`) }, 'failed')],
      ['in a child binding', (log: Logger) => log.child({ bot: secret }).info('child')],
      ['in a long message', (log: Logger) => log.info(`${'x'.repeat(200)} ${secret} ${'y'.repeat(200)}`)],
    ])('%s', (_label, write) => {
      const c = capture('info', [secret]);
      write(c.log);
      const lines = c.lines();
      expect(lines).toHaveLength(1);
      expect(lines[0]).not.toContain(secret);
      expect(lines[0]).not.toContain('AAE-secret');
      expect(lines[0]).toContain('[redacted]');
      // The line is still valid JSON.
      expect(() => parsed(c)).not.toThrow();
    });

    it('keeps the text around the secret', () => {
      const c = capture('info', [secret]);
      c.log.error(new Error(`401 for ${secret}`), `connecting with ${secret} now`);
      const [entry] = parsed(c) as Array<{ msg: string; err: { message: string; stack: string } }>;
      expect(entry?.msg).toBe('connecting with [redacted] now');
      expect(entry?.err.message).toBe('401 for [redacted]');
      expect(entry?.err.stack).toContain('401 for [redacted]');
    });

    it.each([
      ['a double quote', 'pa"ss-word-1'],
      ['a backslash', 'pa\\ss-word-2'],
      ['a backslash before a quote', '\\"pass-word-3'],
      ['a newline and a tab', 'pa\nss\tword-4'],
      ['a control character', 'pa\u0001ss-word-5'],
      ['non-ASCII text', 'pässwörd-ключ-6'],
    ])('a secret containing %s', (_label, value) => {
      const c = capture('info', [value]);
      c.log.info({ note: `field ${value} end` }, `msg ${value} end`);
      c.log.error(new Error(`err ${value} end`), 'failed');
      c.log.info({ body: JSON.stringify({ key: value }) }, 'a JSON body logged as a string');
      const lines = c.lines();
      expect(lines).toHaveLength(3);
      for (const line of lines) {
        expect(line).not.toContain(value);
        expect(line).not.toContain(JSON.stringify(value).slice(1, -1));
        expect(line).toContain('[redacted]');
      }
      const [first, second, third] = parsed(c) as Array<{
        msg: string;
        note?: string;
        body?: string;
        err?: { message: string };
      }>;
      expect(first?.msg).toBe('msg [redacted] end');
      expect(first?.note).toBe('field [redacted] end');
      expect(second?.err?.message).toBe('err [redacted] end');
      expect(JSON.parse(third?.body ?? 'null')).toEqual({ key: '[redacted]' });
      // Nothing of the secret survives in any decoded field.
      expect(JSON.stringify([first, second, third])).not.toContain(value.slice(-6));
    });

    it('replaces a longer secret whole before a shorter one it contains', () => {
      const c = capture('info', ['abcd', 'abcd-efgh-ijkl']);
      c.log.info('value abcd-efgh-ijkl here');
      expect(parsed(c)[0]?.msg).toBe('value [redacted] here');
    });

    it('redacts every value a database URL contributes', () => {
      const url = 'postgres://steward:p%40ss-word@db:5432/steward';
      const c = capture('info', secretValues({ STEWARD_DATABASE_URL: url }));
      c.log.info(`opening ${url}`);
      c.log.info('auth failed for password p@ss-word');
      c.log.info('encoded p%40ss-word');
      expect(parsed(c).map((e) => e.msg)).toEqual([
        'opening [redacted]',
        'auth failed for password [redacted]',
        'encoded [redacted]',
      ]);
    });

    it('ignores an empty secret', () => {
      const c = capture('info', ['']);
      c.log.info('nothing to hide');
      expect(parsed(c)[0]?.msg).toBe('nothing to hide');
    });
  });

  describe('levels', () => {
    const all = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
    it.each([
      ['trace', ['trace', 'debug', 'info', 'warn', 'error', 'fatal']],
      ['debug', ['debug', 'info', 'warn', 'error', 'fatal']],
      ['info', ['info', 'warn', 'error', 'fatal']],
      ['warn', ['warn', 'error', 'fatal']],
      ['error', ['error', 'fatal']],
      ['fatal', ['fatal']],
      ['silent', []],
    ])('%s lets through %j', (level, expected) => {
      const c = capture(level, []);
      for (const method of all) c.log[method](`at ${method}`);
      expect(parsed(c).map((e) => e.msg)).toEqual(expected.map((m) => `at ${m}`));
      expect(c.log.level).toBe(level);
    });

    it('writes pino numeric levels without pid or hostname', () => {
      const c = capture('info', []);
      c.log.info('one');
      c.log.error('two');
      const entries = parsed(c);
      expect(entries.map((e) => e.level)).toEqual([30, 50]);
      for (const entry of entries) {
        expect(entry).not.toHaveProperty('pid');
        expect(entry).not.toHaveProperty('hostname');
        expect(typeof entry.time).toBe('number');
      }
    });

    it('rejects an unknown level', () => {
      expect(() => capture('verbose', [])).toThrow(/verbose/);
    });
  });
});
