import { describe, expect, it } from 'vitest';
import {
  describeTarget,
  parseDigestCommand,
  proposeId,
  resolveTarget,
  skillPrompt,
} from '../src/scheduler/command.ts';
import { checkCron, checkZone, countFires, formatFire, latestFire, nextFire } from '../src/scheduler/cron.ts';
import { DEFAULT_CATCH_UP_MS, decideFire } from '../src/scheduler/decide.ts';

const at = (iso: string) => new Date(iso);

describe('cron expressions', () => {
  it.each([
    ['30 7 * * 1-5', '30 7 * * 1-5'],
    ['  30   7 * *   1-5 ', '30 7 * * 1-5'],
    ['0 9 * * mon-fri', '0 9 * * mon-fri'],
    ['*/15 * * * *', '*/15 * * * *'],
    ['0 18 * * 5', '0 18 * * 5'],
    ['0 8 1 * *', '0 8 1 * *'],
  ])('accepts %j', (input, normal) => {
    expect(checkCron(input)).toEqual({ ok: true, value: normal });
  });

  it.each([
    ['', /is empty/],
    ['* * *', /has 3 fields/],
    ['0 0 7 * * 1-5', /has 6 fields/],
    ['61 7 * * *', /not valid \(Constraint error, got value 61 expected range 0-59\)/],
    ['30 25 * * *', /expected range 0-23/],
    ['a b c d e', /Invalid characters/],
    ['0 0 31 2 *', /not valid/],
    ['*/0 * * * *', /not valid/],
    ['30 7 * * 8', /expected range 0-7/],
  ])('refuses %j with a one-line correction and an example', (input, reason) => {
    const checked = checkCron(input);
    expect(checked.ok).toBe(false);
    const problem = (checked as { problem: string }).problem;
    expect(problem).toMatch(reason);
    expect(problem).toContain('e.g. "30 7 * * 1-5"');
    expect(problem).not.toContain('\n');
  });
});

describe('time zones', () => {
  it.each([
    ['Europe/Paris', 'Europe/Paris'],
    ['europe/paris', 'Europe/Paris'],
    ['UTC', 'UTC'],
    ['America/New_York', 'America/New_York'],
    ['America/Argentina/Buenos_Aires', 'America/Argentina/Buenos_Aires'],
  ])('accepts %j as %j', (input, canonical) => {
    expect(checkZone(input)).toEqual({ ok: true, value: canonical });
  });

  it.each([
    ['Europe/Pari', /did you mean Europe\/Paris\?/],
    ['Paris', /did you mean Europe\/Paris\?/],
    ['America/New_Yrok', /did you mean America\/New_York\?/],
    ['+02:00', /not a time zone/],
    ['Mars/Olympus', /not a time zone; use an IANA time zone/],
    ['here', /not a time zone/],
  ])('refuses %j', (input, problem) => {
    const checked = checkZone(input);
    expect(checked.ok).toBe(false);
    expect((checked as { problem: string }).problem).toMatch(problem);
    expect((checked as { problem: string }).problem).toContain('Europe/Paris, America/New_York or UTC');
  });
});

describe('fire times', () => {
  it('fires at wall-clock time in the zone, across a DST change', () => {
    // Paris is UTC+1 until 29 March 2026, then UTC+2.
    expect(nextFire('30 7 * * 1-5', 'Europe/Paris', at('2026-03-27T12:00:00Z'))).toEqual(
      at('2026-03-30T05:30:00Z'),
    );
    expect(nextFire('30 7 * * 1-5', 'Europe/Paris', at('2026-03-26T12:00:00Z'))).toEqual(
      at('2026-03-27T06:30:00Z'),
    );
    expect(nextFire('30 7 * * *', 'America/New_York', at('2026-03-27T12:00:00Z'))).toEqual(
      at('2026-03-28T11:30:00Z'),
    );
  });

  it('next is strictly after; latest is at or before', () => {
    const fire = at('2026-03-30T05:30:00Z');
    expect(nextFire('30 7 * * 1-5', 'Europe/Paris', fire)).toEqual(at('2026-03-31T05:30:00Z'));
    expect(latestFire('30 7 * * 1-5', 'Europe/Paris', fire)).toEqual(fire);
    expect(latestFire('30 7 * * 1-5', 'Europe/Paris', new Date(fire.getTime() - 1))).toEqual(
      at('2026-03-27T06:30:00Z'),
    );
  });

  it('counts fires in a closed range, up to a cap', () => {
    expect(
      countFires('*/5 * * * *', 'UTC', at('2026-01-01T00:00:00Z'), at('2026-01-01T01:00:00Z'), 100),
    ).toBe(13);
    expect(countFires('*/5 * * * *', 'UTC', at('2026-01-01T00:00:00Z'), at('2026-01-02T00:00:00Z'), 50)).toBe(
      50,
    );
  });

  it('formats a fire in its own zone', () => {
    expect(formatFire(at('2026-03-30T05:30:00Z'), 'Europe/Paris')).toBe('Mon 30 Mar, 07:30');
    expect(formatFire(at('2026-03-30T05:30:00Z'), 'UTC')).toBe('Mon 30 Mar, 05:30');
  });
});

describe('the missed-fire decision', () => {
  const hour = 3_600_000;
  // Weekdays at 07:30 Paris; Monday 30 March 2026 07:30 is 05:30Z.
  const markets = (nextFireAt: string) => ({
    cron: '30 7 * * 1-5',
    timezone: 'Europe/Paris',
    nextFireAt: at(nextFireAt),
  });
  const cases: Array<[string, ReturnType<typeof markets>, string, number, object]> = [
    ['not yet due', markets('2026-03-30T05:30:00Z'), '2026-03-30T05:29:59Z', hour, { due: false }],
    [
      'due on time',
      markets('2026-03-30T05:30:00Z'),
      '2026-03-30T05:30:00Z',
      hour,
      { due: true, fireAt: at('2026-03-30T05:30:00Z'), next: at('2026-03-31T05:30:00Z') },
    ],
    [
      'late but inside the window: runs once',
      markets('2026-03-30T05:30:00Z'),
      '2026-03-30T06:29:00Z',
      hour,
      { due: true, fireAt: at('2026-03-30T05:30:00Z'), next: at('2026-03-31T05:30:00Z') },
    ],
    [
      'exactly at the window edge: still runs',
      markets('2026-03-30T05:30:00Z'),
      '2026-03-30T06:30:00Z',
      hour,
      { due: true, fireAt: at('2026-03-30T05:30:00Z') },
    ],
    [
      'a millisecond past the window: skipped with a notice',
      markets('2026-03-30T05:30:00Z'),
      '2026-03-30T06:30:00.001Z',
      hour,
      {
        due: true,
        next: at('2026-03-31T05:30:00Z'),
        missed: {
          count: 1,
          more: false,
          first: at('2026-03-30T05:30:00Z'),
          last: at('2026-03-30T05:30:00Z'),
        },
      },
    ],
    [
      'down for a week: every missed fire is skipped, none runs',
      markets('2026-03-23T06:30:00Z'),
      '2026-03-30T12:00:00Z',
      hour,
      {
        due: true,
        next: at('2026-03-31T05:30:00Z'),
        missed: {
          count: 6,
          more: false,
          first: at('2026-03-23T06:30:00Z'),
          last: at('2026-03-30T05:30:00Z'),
        },
      },
    ],
    [
      'down for a weekend and back just after the Monday fire: it runs, Friday is reported',
      markets('2026-03-27T06:30:00Z'),
      '2026-03-30T05:40:00Z',
      hour,
      {
        due: true,
        fireAt: at('2026-03-30T05:30:00Z'),
        next: at('2026-03-31T05:30:00Z'),
        missed: {
          count: 1,
          more: false,
          first: at('2026-03-27T06:30:00Z'),
          last: at('2026-03-27T06:30:00Z'),
        },
      },
    ],
    [
      'a shorter window skips what the default would run',
      markets('2026-03-30T05:30:00Z'),
      '2026-03-30T05:50:00Z',
      10 * 60_000,
      { due: true, missed: { count: 1 } },
    ],
  ];
  it.each(cases)('%s', (_name, schedule, now, window, expected) => {
    const decision = decideFire(schedule, at(now), window);
    expect(decision).toMatchObject(expected);
    if ('fireAt' in expected) expect(decision).toHaveProperty('fireAt');
    else expect(decision).not.toHaveProperty('fireAt');
    if (!('missed' in expected)) expect(decision).not.toHaveProperty('missed');
  });

  it('collapses several fires inside the window into one run of the latest', () => {
    const every10 = { cron: '*/10 * * * *', timezone: 'UTC', nextFireAt: at('2026-01-01T00:00:00Z') };
    expect(decideFire(every10, at('2026-01-01T00:25:00Z'), DEFAULT_CATCH_UP_MS)).toEqual({
      due: true,
      fireAt: at('2026-01-01T00:20:00Z'),
      next: at('2026-01-01T00:30:00Z'),
    });
  });

  it('caps the count of a long outage of a frequent schedule', () => {
    const everyMinute = { cron: '* * * * *', timezone: 'UTC', nextFireAt: at('2026-01-01T00:00:00Z') };
    const decision = decideFire(everyMinute, at('2026-01-08T00:00:00Z'), DEFAULT_CATCH_UP_MS);
    expect(decision).toMatchObject({
      due: true,
      fireAt: at('2026-01-08T00:00:00Z'),
      missed: { count: 1000, more: true },
    });
  });

  it('realigns a schedule whose next fire is not one of its fires', () => {
    const changed = { cron: '0 12 * * *', timezone: 'UTC', nextFireAt: at('2026-01-01T07:30:00Z') };
    expect(decideFire(changed, at('2026-01-01T08:00:00Z'), DEFAULT_CATCH_UP_MS)).toEqual({
      due: true,
      next: at('2026-01-01T12:00:00Z'),
    });
  });
});

describe('/digest commands', () => {
  it.each([
    ['hello', undefined],
    ['/digests list', undefined],
    ['/new', undefined],
    ['/digest', { kind: 'help' }],
    ['/digest help', { kind: 'help' }],
    ['/digest list', { kind: 'list' }],
    ['  /digest   LIST  ', { kind: 'list' }],
    ['/digest pause Markets', { kind: 'pause', id: 'markets' }],
    ['/digest resume markets', { kind: 'resume', id: 'markets' }],
    ['/digest remove markets', { kind: 'remove', id: 'markets' }],
    ['/digest run markets', { kind: 'run', id: 'markets' }],
    [
      '/digest add "30 7 * * 1-5" Europe/Paris here markets-digest',
      { kind: 'add', cron: '30 7 * * 1-5', timezone: 'Europe/Paris', target: 'here', body: 'markets-digest' },
    ],
    [
      '/digest add “0 18 * * 5” Europe/Paris travel:!abc:example.org Weekly travel brief:\n  flights and trains',
      {
        kind: 'add',
        cron: '0 18 * * 5',
        timezone: 'Europe/Paris',
        target: 'travel:!abc:example.org',
        body: 'Weekly travel brief:\n  flights and trains',
      },
    ],
    [
      "/digest add '*/30 * * * *' UTC -1001234567890 Summarize the news",
      {
        kind: 'add',
        cron: '*/30 * * * *',
        timezone: 'UTC',
        target: '-1001234567890',
        body: 'Summarize the news',
      },
    ],
  ])('%j', (text, expected) => {
    expect(parseDigestCommand(text)).toEqual(expected);
  });

  it.each([
    ['/digest pause', /Usage: \/digest pause <id>/],
    ['/digest run a b', /Usage: \/digest run <id>/],
    ['/digest frobnicate', /Unknown \/digest command "frobnicate"/],
    ['/digest add', /Usage: \/digest add/],
    [
      '/digest add 30 7 * * 1-5 Europe/Paris here x',
      /Put the cron expression in quotes, e\.g\. \/digest add "30 7/,
    ],
    ['/digest add "30 7 * * 1-5 Europe/Paris here x', /no closing quote/],
    ['/digest add "30 7 * * 1-5"', /Add a time zone/],
    ['/digest add "30 7 * * 1-5" Europe/Paris', /Add where to post/],
    ['/digest add "30 7 * * 1-5" Europe/Paris here   ', /Add what to post/],
  ])('%j is corrected in one line', (text, message) => {
    const parsed = parseDigestCommand(text);
    expect(parsed?.kind).toBe('error');
    const text2 = (parsed as { message: string }).message;
    expect(text2).toMatch(message);
    expect(text2).not.toContain('\n');
  });

  const from = { channel: 'telegram', room: '42' };
  const channels = ['telegram', 'matrix'];
  it.each([
    ['here', { channel: 'telegram', room: '42' }],
    ['HERE', { channel: 'telegram', room: '42' }],
    ['-1001234567890', { channel: 'telegram', room: '-1001234567890' }],
    ['matrix:!abc:example.org', { channel: 'matrix', room: '!abc:example.org' }],
    ['!abc:example.org', { channel: 'telegram', room: '!abc:example.org' }],
    ['irc:#news', { channel: 'telegram', room: 'irc:#news' }],
    ['matrix:', { channel: 'telegram', room: 'matrix:' }],
  ])('target %j', (token, expected) => {
    expect(resolveTarget(token, from, channels)).toEqual(expected);
  });

  it('describes a target relative to the room the owner writes from', () => {
    expect(describeTarget({ channel: 'telegram', room: '42' }, from)).toBe('here');
    expect(describeTarget({ channel: 'telegram', room: '7' }, from)).toBe('7');
    expect(describeTarget({ channel: 'matrix', room: '!a:b' }, from)).toBe('matrix:!a:b');
  });

  it.each([
    ['markets-digest', [], 'markets-digest'],
    ['markets-digest', ['markets-digest'], 'markets-digest-2'],
    ['markets-digest', ['markets-digest', 'markets-digest-2'], 'markets-digest-3'],
    ['Weekly travel brief for the next two weekends', [], 'weekly-travel-brief'],
    ['Résumé des marchés', [], 'resume-des-marches'],
    ['Supercalifragilisticexpialidocious words', [], 'supercalifragilisticexpi'],
    ['!!!', [], 'digest'],
    ['', ['digest'], 'digest-2'],
  ])('id from %j (taken %j) is %j', (body, taken, id) => {
    const proposed = proposeId(body, new Set(taken));
    expect(proposed).toBe(id);
    expect(proposed).toMatch(/^[a-z0-9][a-z0-9-]{0,31}$/);
  });

  it('a skill digest loads its skill', () => {
    expect(skillPrompt('markets-digest')).toBe(
      'Load the markets-digest skill with load_skill and produce its digest.',
    );
  });
});
