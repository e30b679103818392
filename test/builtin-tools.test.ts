import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';
import { evaluateExpression, formatNumber } from '../src/tools/builtin/arithmetic.ts';
import { calculateTool } from '../src/tools/builtin/calculate.ts';
import { convertTimeTool } from '../src/tools/builtin/convert-time.ts';
import { currentTimeTool } from '../src/tools/builtin/current-time.ts';
import { builtinPureTools } from '../src/tools/builtin/index.ts';
import { type ToolContext, ToolInputError } from '../src/tools/types.ts';

function context(now: string): ToolContext {
  return {
    signal: new AbortController().signal,
    sessionId: 'test-session',
    workspace: '/tmp',
    log: createLogger('silent', []),
    now: () => new Date(now),
  };
}

/** Calls the function and returns the ToolInputError it throws (failing if it throws anything else). */
async function inputError(run: () => unknown): Promise<ToolInputError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(ToolInputError);
    return error as ToolInputError;
  }
  throw new Error('expected a ToolInputError, but nothing was thrown');
}

const calc = (expression: string): string => formatNumber(evaluateExpression(expression));

describe('the pure built-in tools', () => {
  it('are exported together, with distinct names, trusted', () => {
    expect(builtinPureTools.map((t) => t.name)).toEqual(['current_time', 'convert_time', 'calculate']);
    for (const tool of builtinPureTools) expect(tool.trusted).toBe(true);
  });

  const ajv = new Ajv({ strict: true, allErrors: true });
  it.each(builtinPureTools.map((t) => [t.name, t] as const))(
    '%s has a strict schema that compiles',
    (_n, tool) => {
      const schema = tool.inputSchema as {
        type: string;
        additionalProperties: unknown;
        properties: Record<string, { description?: string }>;
        required: string[];
      };
      expect(schema.type).toBe('object');
      expect(schema.additionalProperties).toBe(false);
      for (const name of schema.required) expect(Object.keys(schema.properties)).toContain(name);
      for (const property of Object.values(schema.properties))
        expect(property.description?.length).toBeGreaterThan(10);
      const validate = ajv.compile(schema);
      expect(validate({ unexpected: 1 })).toBe(false);
      expect(tool.description).toMatch(/Example call: \{/);
      expect(tool.description.length).toBeGreaterThan(300);
    },
  );

  it('the schemas accept good arguments and refuse bad ones', () => {
    const [current, convert, calculate] = builtinPureTools.map((t) => ajv.compile(t.inputSchema));
    expect(current?.({})).toBe(true);
    expect(current?.({ timezone: 'Europe/Oslo' })).toBe(true);
    expect(current?.({ timezone: 5 })).toBe(false);
    expect(convert?.({ time: '10:00', from_timezone: 'UTC', to_timezone: 'Asia/Tokyo' })).toBe(true);
    expect(convert?.({ time: '10:00', from_timezone: 'UTC' })).toBe(false);
    expect(calculate?.({ expression: '1+1' })).toBe(true);
    expect(calculate?.({})).toBe(false);
    expect(calculate?.({ expression: '1+1', code: 'x' })).toBe(false);
    expect(calculate?.({ expression: '1'.repeat(600) })).toBe(false);
  });
});

describe('calculate', () => {
  const cases: Array<[string, string]> = [
    // numbers and formatting
    ['42', '42'],
    ['3.5', '3.5'],
    ['.5', '0.5'],
    ['1e3', '1000'],
    ['2.5E-4', '0.00025'],
    ['1e21', '1e+21'],
    ['0.1 + 0.2', '0.3'],
    ['0.1 * 3', '0.3'],
    ['1 / 3', '0.333333333333333'],
    ['2 / 3', '0.666666666666667'],
    ['1.1 * 1.1', '1.21'],
    ['10 / 4', '2.5'],
    ['2^53', '9007199254740992'],
    ['2^53 - 1', '9007199254740991'],
    ['2^60', '1152921504606850000'],
    ['-2^70', '-1.18059162071741e+21'],
    ['10^20', '100000000000000000000'],
    ['-0', '0'],
    ['0 * -1', '0'],
    // precedence and associativity
    ['1 + 2 * 3', '7'],
    ['(1 + 2) * 3', '9'],
    ['10 - 4 - 3', '3'],
    ['100 / 10 / 5', '2'],
    ['2 * 3 ^ 2', '18'],
    ['2 ^ 3 ^ 2', '512'],
    ['2 ** 3 ** 2', '512'],
    ['(2 ^ 3) ^ 2', '64'],
    ['7 % 3', '1'],
    ['-7 % 3', '-1'],
    ['7.5 % 2', '1.5'],
    ['1 + 7 % 3 * 2', '3'],
    // unary
    ['-2 ^ 2', '-4'],
    ['(-2) ^ 2', '4'],
    ['2 ^ -1', '0.5'],
    ['--3', '3'],
    ['+-+3', '-3'],
    ['1 - -1', '2'],
    ['-(2 + 3) * 2', '-10'],
    // constants and functions
    ['pi', '3.14159265358979'],
    ['e', '2.71828182845905'],
    ['2 * pi', '6.28318530717959'],
    ['PI', '3.14159265358979'],
    ['sqrt(16)', '4'],
    ['sqrt(2)', '1.4142135623731'],
    ['abs(-5.5)', '5.5'],
    ['round(2.5)', '3'],
    ['round(-2.5)', '-3'],
    ['round(2.675, 2)', '2.68'],
    ['round(1234.5678, 1)', '1234.6'],
    ['round(1250, -2)', '1300'],
    ['floor(-1.5)', '-2'],
    ['ceil(1.2)', '2'],
    ['min(3, 1, 2)', '1'],
    ['max(3, 1, 2, 10 / 2)', '5'],
    ['max(7)', '7'],
    ['ln(e)', '1'],
    ['ln(1)', '0'],
    ['log10(1000)', '3'],
    ['log(1000)', '3'],
    ['log(8, 2)', '3'],
    ['log(81, 3)', '4'],
    ['exp(0)', '1'],
    ['exp(1)', '2.71828182845905'],
    ['sin(0)', '0'],
    ['sin(pi / 2)', '1'],
    ['cos(pi)', '-1'],
    ['tan(pi / 4)', '1'],
    ['sin(pi)', '1.22464679914735e-16'],
    ['sqrt(sqrt(256)) + abs(min(-3, -4))', '8'],
    ['1200 * (1 + 0.05 / 12) ^ (12 * 3)', '1393.76667760016'],
    ['  ( 1 +\n2 )\t* 3 ', '9'],
  ];

  it('has a large table', () => expect(cases.length).toBeGreaterThanOrEqual(40));

  it.each(cases)('%j = %s', (expression, expected) => {
    expect(calc(expression)).toBe(expected);
  });

  const hostile: string[] = [
    'process.exit()',
    'process',
    'constructor',
    '__proto__',
    'toString',
    'hasOwnProperty(1)',
    'Math.PI',
    '1;2',
    'alert(1)',
    '`x`',
    '$(rm)',
    '1 +',
    '((1)',
    '(1))',
    'sqrt()',
    'sqrt(1, 2)',
    'sqrt 4',
    'round(1, 2, 3)',
    'round(1, 0.5)',
    'min()',
    'max(1,,2)',
    '1/0',
    '1 % 0',
    '0 ^ -1',
    'sqrt(-1)',
    'ln(0)',
    'log(-1)',
    'log(8, 1)',
    '(-8) ^ (1/3)',
    '10 ^ 400',
    '1e400',
    'exp(1000)',
    'a=1',
    'x',
    '[1]',
    '"1"',
    "'1'",
    '1..2',
    '1.2.3',
    '2pi',
    '2(3)',
    '1 2',
    '1,000',
    '2 * * 3',
    '0x10',
    '1 // 2',
    '1 & 2',
    '!1',
    '1 < 2',
    '{}',
    '=> 1',
    '\\u0031',
    '1e',
    '',
    '   ',
    '😀',
    `${'('.repeat(200)}1${')'.repeat(200)}`,
    `${'-'.repeat(200)}1`,
    `1${'^1'.repeat(200)}`,
    `1${'+1'.repeat(300)}`,
  ];

  it('has a large hostile table', () => expect(hostile.length).toBeGreaterThanOrEqual(20));

  it.each(hostile.map((h) => [h.length > 40 ? `${h.slice(0, 40)}… (${h.length} chars)` : h, h]))(
    'rejects %j',
    async (_label, expression) => {
      const error = await inputError(() => evaluateExpression(expression));
      expect(error.message.length).toBeGreaterThan(10);
    },
  );

  it('names the offending token and its position', async () => {
    expect((await inputError(() => evaluateExpression('process.exit()'))).message).toMatch(
      /^Unexpected "process" at position 0: only numbers, .*sqrt, abs/,
    );
    expect((await inputError(() => evaluateExpression('1 + constructor'))).message).toMatch(
      /Unexpected "constructor" at position 4/,
    );
    expect((await inputError(() => evaluateExpression('1;2'))).message).toMatch(
      /Unexpected ";" at position 1/,
    );
    expect((await inputError(() => evaluateExpression('1 +'))).message).toMatch(
      /end of expression at position 3/,
    );
    expect((await inputError(() => evaluateExpression('((1)'))).message).toMatch(/Missing "\)".*position 0/);
    expect((await inputError(() => evaluateExpression('sqrt()'))).message).toMatch(
      /sqrt .*takes 1 argument, got 0/,
    );
    expect((await inputError(() => evaluateExpression('4 / (2 - 2)'))).message).toMatch(
      /Division by zero at position 2/,
    );
    expect((await inputError(() => evaluateExpression('2pi'))).message).toMatch(/2\*pi/);
    expect((await inputError(() => evaluateExpression('1'.repeat(600)))).message).toMatch(/limit is 500/);
    expect(
      (await inputError(() => evaluateExpression(`${'('.repeat(200)}1${')'.repeat(200)}`))).message,
    ).toMatch(/nested too deeply/);
  });

  it('allows nesting up to the limit', () => {
    expect(calc(`${'('.repeat(99)}1${')'.repeat(99)}`)).toBe('1');
    expect(calc(`${'-'.repeat(98)}1`)).toBe('1');
  });

  it('execute echoes the expression with the formatted result', async () => {
    const ctx = context('2025-01-01T00:00:00Z');
    expect(await calculateTool.execute({ expression: ' 0.1 +  0.2 ' }, ctx)).toBe('0.1 + 0.2 = 0.3');
    expect(await calculateTool.execute({ expression: '2^10' }, ctx)).toBe('2^10 = 1024');
    await inputError(() => calculateTool.execute({ expression: 'globalThis' }, ctx));
  });
});

describe('current_time', () => {
  // 2025-03-30T00:30:00Z: Europe still on winter time (the change is at 01:00 UTC).
  const ctx = context('2025-03-30T00:30:00Z');

  it('defaults to UTC', async () => {
    expect(await currentTimeTool.execute({}, ctx)).toBe(
      [
        'Sunday 2025-03-30 00:30:00 in UTC (UTC+00:00)',
        'ISO 8601: 2025-03-30T00:30:00+00:00',
        'UTC: 2025-03-30T00:30:00Z',
      ].join('\n'),
    );
  });

  it.each([
    ['Europe/Oslo', 'Sunday 2025-03-30 01:30:00', '2025-03-30T01:30:00+01:00'],
    ['Asia/Kolkata', 'Sunday 2025-03-30 06:00:00', '2025-03-30T06:00:00+05:30'],
    ['Asia/Kathmandu', 'Sunday 2025-03-30 06:15:00', '2025-03-30T06:15:00+05:45'],
    ['America/New_York', 'Saturday 2025-03-29 20:30:00', '2025-03-29T20:30:00-04:00'],
    ['America/St_Johns', 'Saturday 2025-03-29 22:00:00', '2025-03-29T22:00:00-02:30'],
    ['Pacific/Auckland', 'Sunday 2025-03-30 13:30:00', '2025-03-30T13:30:00+13:00'],
    ['Pacific/Kiritimati', 'Sunday 2025-03-30 14:30:00', '2025-03-30T14:30:00+14:00'],
  ])('in %s', async (timezone, local, iso) => {
    const text = await currentTimeTool.execute({ timezone }, ctx);
    expect(text).toContain(`${local} in ${timezone}`);
    expect(text).toContain(`ISO 8601: ${iso}`);
    expect(text).toContain('UTC: 2025-03-30T00:30:00Z');
  });

  it('follows the clock across a DST change', async () => {
    const after = context('2025-03-30T01:30:00Z');
    expect(await currentTimeTool.execute({ timezone: 'Europe/Berlin' }, after)).toContain(
      '2025-03-30T03:30:00+02:00',
    );
  });

  it('refuses unknown zones and fixed offsets with a correction', async () => {
    const bad = await inputError(() => currentTimeTool.execute({ timezone: 'Mars/Base' }, ctx));
    expect(bad.message).toBe(
      'Unknown time zone "Mars/Base". Use an IANA name such as "Europe/Oslo" or "America/New_York".',
    );
    expect((await inputError(() => currentTimeTool.execute({ timezone: '+05:30' }, ctx))).message).toMatch(
      /fixed UTC offset/,
    );
    await inputError(() => currentTimeTool.execute({ timezone: '  ' }, ctx));
    for (const timezone of ['PST', 'IST', 'BST', 'CEST']) {
      expect((await inputError(() => currentTimeTool.execute({ timezone }, ctx))).message).toMatch(
        /abbreviations .* are ambiguous/,
      );
    }
  });

  it('accepts tzdb names without a slash and aliases, case-insensitively', async () => {
    expect(await currentTimeTool.execute({ timezone: 'utc' }, ctx)).toContain('in utc (UTC+00:00)');
    expect(await currentTimeTool.execute({ timezone: 'Japan' }, ctx)).toContain('2025-03-30T09:30:00+09:00');
    expect(await currentTimeTool.execute({ timezone: 'US/Eastern' }, ctx)).toContain('-04:00');
    expect(await currentTimeTool.execute({ timezone: 'Asia/Calcutta' }, ctx)).toContain('+05:30');
  });
});

describe('convert_time', () => {
  const ctx = context('2025-03-30T00:30:00Z');
  const convert = async (time: string, from_timezone: string, to_timezone: string): Promise<string> =>
    String(await convertTimeTool.execute({ time, from_timezone, to_timezone }, ctx));

  it('converts with both offsets, the UTC instant and the gap between zones', async () => {
    expect(await convert('2025-03-28 10:00', 'Europe/Berlin', 'America/New_York')).toBe(
      [
        'From: Friday 2025-03-28 10:00 in Europe/Berlin (UTC+01:00)',
        'To:   Friday 2025-03-28 05:00 in America/New_York (UTC-04:00)',
        'ISO 8601: 2025-03-28T10:00:00+01:00 = 2025-03-28T05:00:00-04:00 = 2025-03-28T09:00:00Z',
        'America/New_York is 5 h behind Europe/Berlin at that moment; same date.',
      ].join('\n'),
    );
  });

  it.each([
    // The US changes in early March, Europe at the end of March: the gap is 5 h, then 6 h.
    ['2025-03-05 12:00', 'Europe/Berlin', 'America/New_York', '2025-03-05T06:00:00-05:00', '6 h behind'],
    ['2025-03-12 12:00', 'Europe/Berlin', 'America/New_York', '2025-03-12T07:00:00-04:00', '5 h behind'],
    ['2025-04-02 12:00', 'Europe/Berlin', 'America/New_York', '2025-04-02T06:00:00-04:00', '6 h behind'],
    // Europe goes back on 26 October, the US on 2 November.
    ['2025-10-29 09:00', 'America/New_York', 'Europe/Berlin', '2025-10-29T14:00:00+01:00', '5 h ahead'],
    ['2025-11-03 09:00', 'America/New_York', 'Europe/Berlin', '2025-11-03T15:00:00+01:00', '6 h ahead'],
    ['2025-11-03T09:00:30', 'America/New_York', 'Europe/Berlin', '2025-11-03T15:00:30+01:00', '6 h ahead'],
    ['2025-06-15 12:00', 'UTC', 'Asia/Kolkata', '2025-06-15T17:30:00+05:30', '5 h 30 min ahead'],
    ['2025-06-15 12:00', 'Asia/Kolkata', 'Asia/Kathmandu', '2025-06-15T12:15:00+05:45', '15 min ahead'],
    ['2025-06-15 12:00', 'Europe/Oslo', 'Europe/Oslo', '2025-06-15T12:00:00+02:00', 'same clock time'],
  ])('%s %s -> %s', async (time, from, to, iso, apart) => {
    const text = await convert(time, from, to);
    expect(text).toContain(` = ${iso} = `);
    expect(text).toContain(apart);
    expect(text).not.toContain('Note:');
  });

  it('reports a date change across the date line', async () => {
    const west = await convert('2025-06-01 09:00', 'Pacific/Auckland', 'America/Los_Angeles');
    expect(west).toContain('To:   Saturday 2025-05-31 14:00 in America/Los_Angeles (UTC-07:00)');
    expect(west).toContain('19 h behind');
    expect(west).toContain('date change: the previous day in America/Los_Angeles (-1 day)');

    const east = await convert('2025-01-15 18:00', 'America/Los_Angeles', 'Pacific/Auckland');
    expect(east).toContain('To:   Thursday 2025-01-16 15:00 in Pacific/Auckland (UTC+13:00)');
    expect(east).toContain('21 h ahead');
    expect(east).toContain('date change: the next day in Pacific/Auckland (+1 day)');

    const far = await convert('2025-06-01 23:00', 'Etc/GMT+12', 'Pacific/Kiritimati');
    expect(far).toContain('Tuesday 2025-06-03 01:00');
    expect(far).toContain('(+2 days)');
  });

  it('reads "HH:MM" as today in the source zone', async () => {
    // At 2025-03-30T00:30Z it is still Saturday 29 March in Los Angeles.
    const text = await convert('17:00', 'America/Los_Angeles', 'Pacific/Auckland');
    expect(text).toContain('From: Saturday 2025-03-29 17:00 in America/Los_Angeles (UTC-07:00)');
    expect(text).toContain('To:   Sunday 2025-03-30 13:00 in Pacific/Auckland (UTC+13:00)');
    expect(text).toContain('"17:00" was read as today in America/Los_Angeles: 2025-03-29.');
    expect(await convert('9:05', 'UTC', 'Asia/Kolkata')).toContain('2025-03-30T09:05:00+00:00');
  });

  it('moves a time in the DST gap forward by the gap, and says so', async () => {
    const berlin = await convert('2025-03-30 02:30', 'Europe/Berlin', 'UTC');
    expect(berlin).toContain('From: Sunday 2025-03-30 03:30 in Europe/Berlin (UTC+02:00)');
    expect(berlin).toContain('= 2025-03-30T01:30:00Z');
    expect(berlin).toMatch(
      /Note: 2025-03-30 02:30 does not exist in Europe\/Berlin .*read as 03:30.*1 h gap/,
    );

    const newYork = await convert('2025-03-09 02:30', 'America/New_York', 'UTC');
    expect(newYork).toContain('= 2025-03-09T07:30:00Z');
    expect(newYork).toContain('does not exist');
  });

  it('uses the first occurrence of a time in the DST overlap and gives the second', async () => {
    const berlin = await convert('2025-10-26 02:30', 'Europe/Berlin', 'UTC');
    expect(berlin).toContain('2025-10-26T02:30:00+02:00 = 2025-10-26T00:30:00+00:00');
    expect(berlin).toMatch(
      /happens twice.*second \(UTC\+01:00\) is 2025-10-26T02:30:00\+01:00 = 2025-10-26T01:30:00/,
    );

    const newYork = await convert('2025-11-02 01:30', 'America/New_York', 'Europe/Berlin');
    expect(newYork).toContain('2025-11-02T01:30:00-04:00 = 2025-11-02T06:30:00+01:00');
    expect(newYork).toContain('2025-11-02T01:30:00-05:00 = 2025-11-02T07:30:00+01:00');
  });

  it.each([
    [
      '2025-03-28 10:00',
      'Mars/Base',
      'UTC',
      /Unknown from_timezone \(time zone\) "Mars\/Base"\. Use an IANA name/,
    ],
    ['2025-03-28 10:00', 'UTC', 'Nowhere', /Unknown to_timezone/],
    ['2025-03-28 10:00', 'UTC', '-05:00', /fixed UTC offset/],
    [
      'tomorrow at 3',
      'UTC',
      'Europe/Oslo',
      /Cannot read the time "tomorrow at 3".*e\.g\. "2025-03-30 14:30"/,
    ],
    ['10:00Z', 'UTC', 'Europe/Oslo', /no offset or "Z"/],
    ['2025-03-28T10:00:00+01:00', 'UTC', 'Europe/Oslo', /Cannot read/],
    ['3pm', 'UTC', 'Europe/Oslo', /Cannot read/],
    ['28/03/2025 10:00', 'UTC', 'Europe/Oslo', /Cannot read/],
    ['2025-02-29 10:00', 'UTC', 'Europe/Oslo', /2025-02 has 28 days/],
    ['2025-13-01 10:00', 'UTC', 'Europe/Oslo', /month/],
    ['24:00', 'UTC', 'Europe/Oslo', /out of range/],
    ['12:60', 'UTC', 'Europe/Oslo', /out of range/],
    ['0999-01-01 10:00', 'UTC', 'Europe/Oslo', /year/],
  ])('refuses %j from %s to %s', async (time, from, to, message) => {
    const error = await inputError(() => convert(time, from, to));
    expect(error.message).toMatch(message);
  });

  it('accepts a leap day', async () => {
    expect(await convert('2024-02-29 10:00', 'UTC', 'Europe/Oslo')).toContain('2024-02-29T11:00:00+01:00');
  });
});
