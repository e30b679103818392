// `digests:` in the config file: the shape, and errors that name the file, line and key.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.ts';
import { ConfigError } from '../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'steward-digests-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;
const write = (text: string) => {
  const file = join(dir, `steward-${++count}.yaml`);
  writeFileSync(file, text);
  return file;
};
const load = (text: string) => {
  const file = write(text);
  return { file, config: () => loadConfig({ STEWARD_CONFIG: file }, dir) };
};

const GOOD = `log_level: info
digests:
  markets:
    cron: "30 7 * * 1-5"
    timezone: Europe/Paris
    channel: telegram
    room: -1001234567890
    skill: markets-digest
  travel:
    cron: "0 18 * * 5"
    timezone: europe/paris
    channel: matrix
    room: "!abc:example.org"
    prompt: Weekly travel brief for the next two weekends.
digest_catch_up_minutes: 90
`;

describe('digests in the config file', () => {
  it('resolves each entry; a numeric room becomes its id; the zone is normalized', () => {
    const { file, config } = load(GOOD);
    expect(config().digests).toEqual({
      catchUpMs: 90 * 60_000,
      schedules: [
        {
          id: 'markets',
          cron: '30 7 * * 1-5',
          timezone: 'Europe/Paris',
          channel: 'telegram',
          room: '-1001234567890',
          skill: 'markets-digest',
          where: `${file} line 3, key digests.markets`,
        },
        {
          id: 'travel',
          cron: '0 18 * * 5',
          timezone: 'Europe/Paris',
          channel: 'matrix',
          room: '!abc:example.org',
          prompt: 'Weekly travel brief for the next two weekends.',
          where: `${file} line 9, key digests.travel`,
        },
      ],
    });
  });

  it('is absent without the keys, and the window defaults to one hour', () => {
    expect(load('log_level: info\n').config().digests).toBeUndefined();
    expect(load('digests: {}\n').config().digests).toEqual({ schedules: [], catchUpMs: 3_600_000 });
  });

  const entry = (lines: string) => `log_level: info\ndigests:\n  markets:\n${lines}`;
  const base =
    '    cron: "30 7 * * 1-5"\n    timezone: Europe/Paris\n    channel: telegram\n    room: "-100"\n';
  it.each([
    [
      'a bad cron expression',
      entry(`${base.replace('30 7 * * 1-5', '61 7 * * *')}    skill: markets-digest\n`),
      (f: string) =>
        `config: ${f} line 4, key digests.markets.cron: the cron expression "61 7 * * *" is not valid (Constraint error, got value 61 expected range 0-59); use five fields`,
    ],
    [
      'a six-field cron expression',
      entry(`${base.replace('30 7 * * 1-5', '0 30 7 * * 1-5')}    skill: markets-digest\n`),
      (f: string) =>
        `config: ${f} line 4, key digests.markets.cron: the cron expression "0 30 7 * * 1-5" has 6 fields`,
    ],
    [
      'a misspelled zone',
      entry(`${base.replace('Europe/Paris', 'Europe/Pari')}    skill: markets-digest\n`),
      (f: string) =>
        `config: ${f} line 5, key digests.markets.timezone: "Europe/Pari" is not a time zone; did you mean Europe/Paris?`,
    ],
    [
      'both prompt and skill',
      entry(`${base}    skill: markets-digest\n    prompt: hi\n`),
      (f: string) =>
        `config: ${f} line 3, key digests.markets: give either prompt (what to produce) or skill`,
    ],
    [
      'neither prompt nor skill',
      entry(base),
      (f: string) => `config: ${f} line 3, key digests.markets: give either prompt`,
    ],
    [
      'a missing room',
      entry(`${base.replace('    room: "-100"\n', '')}    skill: markets-digest\n`),
      (f: string) =>
        `config: ${f} line 3, key digests.markets: room is missing; give the room id on that channel`,
    ],
    [
      'an unknown key',
      entry(`${base}    skill: markets-digest\n    tz: UTC\n`),
      (f: string) =>
        `config: ${f} line 9, key digests.markets.tz: unknown key; use cron, timezone, channel, room, prompt, skill`,
    ],
    [
      'an empty prompt',
      entry(`${base}    prompt: ""\n`),
      (f: string) => `config: ${f} line 8, key digests.markets.prompt: must be a non-empty string`,
    ],
    [
      'a bad id',
      'digests:\n  Markets_Daily:\n    cron: "30 7 * * *"\n',
      (f: string) => `config: ${f} line 2, key digests.Markets_Daily: a digest id uses lowercase letters`,
    ],
    [
      'an entry that is not a mapping',
      'digests:\n  markets: every morning\n',
      (f: string) => `config: ${f} line 2, key digests.markets: must be a mapping of keys`,
    ],
    [
      'a window that is not positive',
      'digest_catch_up_minutes: 0\n',
      (f: string) => `config: ${f} line 1, key digest_catch_up_minutes: must be > 0; use minutes up to 10080`,
    ],
  ])('refuses %s in one line naming the file, line and key', (_name, text, expected) => {
    const { file, config } = load(text);
    let message = '';
    try {
      config();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message.startsWith(expected(file)), message).toBe(true);
    expect(message).not.toContain('\n');
  });
});
