import { describe, expect, it } from 'vitest';
import { parseResolveFlags } from '../cli/commands/netguard.ts';
import { UsageError } from '../src/errors.ts';
import { runSteward } from './support/run-steward.ts';

const check = (...args: string[]) => runSteward(['netguard', 'check', ...args]);

/** The one JSON line a check prints. */
function verdictOf(stdout: string): unknown {
  const lines = stdout.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string);
}

describe('steward netguard check', () => {
  it('prints one JSON verdict and exits 1 for a blocked URL, fetching nothing', async () => {
    const run = await check('http://0x7f.1:8080/admin');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(
      '{"verdict":"block","reason":"127.0.0.1 is loopback (127.0.0.0/8)","addresses":["127.0.0.1"]}\n',
    );
    expect(run.stderr).toBe('');
  });

  it('exits 0 for a public address', async () => {
    const run = await check('https://8.8.8.8/');
    expect(run.code).toBe(0);
    expect(verdictOf(run.stdout)).toEqual({
      verdict: 'allow',
      reason: '8.8.8.8 is global unicast',
      addresses: ['8.8.8.8'],
    });
  });

  it('resolves names itself (localhost through the system resolver) and blocks refused schemes', async () => {
    const local = await check('http://localhost/');
    expect(local.code).toBe(1);
    expect(verdictOf(local.stdout)).toMatchObject({
      verdict: 'block',
      reason: expect.stringContaining('loopback'),
    });
    const ftp = await check('ftp://8.8.8.8/');
    expect(ftp.code).toBe(1);
    expect(verdictOf(ftp.stdout)).toEqual({
      verdict: 'block',
      reason: 'the scheme "ftp" is not allowed; only http and https are',
      addresses: [],
    });
  });

  it('answers lookups from --resolve, several flags for one host being several answers', async () => {
    const one = await check('--resolve', 'shop.example=93.184.215.14', 'https://SHOP.example./cart');
    expect(one.code).toBe(0);
    expect(verdictOf(one.stdout)).toMatchObject({ verdict: 'allow', addresses: ['93.184.215.14'] });

    const mixed = await check(
      '--resolve',
      'shop.example=93.184.215.14',
      '--resolve=shop.example=[fd00::1]',
      'http://shop.example/',
    );
    expect(mixed.code).toBe(1);
    expect(verdictOf(mixed.stdout)).toEqual({
      verdict: 'block',
      reason:
        'shop.example resolves to a refused address (one of 2 answers: 93.184.215.14, fd00::1): fd00::1 is unique local (ULA) (fc00::/7)',
      addresses: ['93.184.215.14', 'fd00::1'],
    });
  });

  it('exits 2 with usage for a missing URL, extra arguments, a bad --resolve or an unknown subcommand', async () => {
    for (const args of [
      ['netguard', 'check'],
      ['netguard', 'check', 'http://a.example/', 'http://b.example/'],
      ['netguard', 'check', '--resolve', 'a.example', 'http://a.example/'],
      ['netguard', 'check', '--resolve', 'a.example=not-an-ip', 'http://a.example/'],
      ['netguard', 'check', '--bogus', 'http://a.example/'],
      ['netguard'],
      ['netguard', 'vet', 'http://a.example/'],
    ]) {
      const run = await runSteward(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout, args.join(' ')).toBe('');
      expect(run.stderr, args.join(' ')).toMatch(/^steward: .*\n\nUsage: steward <command>/);
    }
  });
});

describe('parseResolveFlags', () => {
  it('normalizes hosts as URLs do and keeps answers in order', () => {
    expect(parseResolveFlags(['Bücher.Example=1.2.3.4', 'xn--bcher-kva.example=[2606:4700::1]'])).toEqual(
      new Map([['xn--bcher-kva.example', ['1.2.3.4', '2606:4700::1']]]),
    );
  });

  it.each([
    '=1.2.3.4',
    'host',
    'host=',
    'a/b=1.2.3.4',
    'user@host=1.2.3.4',
    'host:80=1.2.3.4',
    'host=0177.0.0.1',
  ])('refuses %j', (value) => expect(() => parseResolveFlags([value])).toThrow(UsageError));
});
