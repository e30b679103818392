import type { buildConnector } from 'undici';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  addressVerdict,
  guardedFetch,
  type Resolver,
  staticResolver,
  vetUrl,
} from '../src/netguard/index.ts';
import { pinConnectOptions, pinnedAgent } from '../src/netguard/pinned-agent.ts';

const PUBLIC = '93.184.215.14';
const notFound: Resolver = async (host) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};
const stub = staticResolver(
  new Map<string, string[]>([
    ['public.test', [PUBLIC]],
    ['xn--bcher-kva.example', [PUBLIC, '2606:4700:4700::1111']],
    ['localhost', ['127.0.0.1', '::1']],
    ['internal.test', ['10.0.0.5']],
    ['xn--internl-bxa.test', ['192.168.1.10']],
    ['169.254.169.254.nip.io', ['169.254.169.254']],
    ['mixed.test', [PUBLIC, '10.0.0.1']],
    ['mixed6.test', [PUBLIC, '::1']],
    ['metadata6.test', ['fd00:ec2::254']],
    ['empty.test', []],
  ]),
  notFound,
);

// [url, verdict, words the reason must contain]
const TABLE: [string, 'allow' | 'block', string?][] = [
  // Public addresses, and the allowed side of every IPv4 range boundary.
  ['http://8.8.8.8/', 'allow', 'global unicast'],
  ['https://1.1.1.1/dns-query', 'allow'],
  ['http://1.0.0.0/', 'allow'],
  ['http://9.255.255.255/', 'allow'],
  ['http://11.0.0.0/', 'allow'],
  ['http://100.63.255.255/', 'allow'],
  ['http://100.128.0.0/', 'allow'],
  ['http://126.255.255.255/', 'allow'],
  ['http://128.0.0.0/', 'allow'],
  ['http://169.253.255.255/', 'allow'],
  ['http://169.255.0.0/', 'allow'],
  ['http://172.15.255.255/', 'allow'],
  ['http://172.32.0.0/', 'allow'],
  ['http://192.0.1.255/', 'allow'],
  ['http://192.0.3.0/', 'allow'],
  ['http://192.167.255.255/', 'allow'],
  ['http://192.169.0.0/', 'allow'],
  ['http://198.17.255.255/', 'allow'],
  ['http://198.20.0.0/', 'allow'],
  ['http://198.51.99.255/', 'allow'],
  ['http://203.0.114.0/', 'allow'],
  ['http://223.255.255.255/', 'allow'],
  ['http://[2606:4700:4700::1111]/', 'allow'],
  ['http://[2001:db9::1]/', 'allow'],
  ['http://[2001:200::1]/', 'allow'],
  ['http://[::ffff:8.8.8.8]/', 'allow', 'embeds 8.8.8.8 (IPv4-mapped)'],
  ['http://[64:ff9b::808:808]/', 'allow', 'NAT64'],
  ['http://[2002:808:808::1]/', 'allow', '6to4'],
  ['http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/', 'allow', 'embeds 8.8.8.8 (Teredo)'],
  // Names: resolved here, every answer judged.
  ['http://public.test/', 'allow', 'every address public.test resolves to'],
  ['HTTP://PUBLIC.TEST:8080/a?b#c', 'allow'],
  ['http://public.test./', 'allow'],
  ['http://ｐｕｂｌｉｃ.test/', 'allow'],
  ['https://bücher.example/', 'allow'],
  ['http://localhost/', 'block', 'loopback'],
  ['http://localhost./', 'block', 'loopback'],
  ['http://internal.test/', 'block', '10.0.0.5 is private'],
  ['http://internäl.test/', 'block', '192.168.1.10 is private'],
  ['http://169.254.169.254.nip.io/', 'block', 'link-local'],
  ['http://mixed.test/', 'block', 'one of 2 answers'],
  ['http://mixed6.test/', 'block', '::1 is loopback'],
  ['http://metadata6.test/', 'block', 'unique local'],
  ['http://nowhere.test/', 'block', 'does not resolve (ENOTFOUND)'],
  ['http://empty.test/', 'block', 'does not resolve'],
  // The refused side of every IPv4 range boundary.
  ['http://0.0.0.0/', 'block', 'unspecified'],
  ['http://0.255.255.255/', 'block', 'unspecified'],
  ['http://10.0.0.0/', 'block', 'private'],
  ['http://10.255.255.255/', 'block', 'private'],
  ['http://100.64.0.0/', 'block', 'carrier-grade NAT'],
  ['http://100.64.0.1/', 'block', 'carrier-grade NAT'],
  ['http://100.127.255.255/', 'block', 'carrier-grade NAT'],
  ['http://127.0.0.1/', 'block', 'loopback'],
  ['http://127.255.255.255/', 'block', 'loopback'],
  ['http://169.254.0.0/', 'block', 'link-local'],
  ['http://169.254.169.254/latest/meta-data/', 'block', 'link-local'],
  ['http://169.254.255.255/', 'block', 'link-local'],
  ['http://172.16.0.0/', 'block', 'private'],
  ['http://172.31.255.255/', 'block', 'private'],
  ['http://192.0.0.0/', 'block', 'IETF protocol assignments'],
  ['http://192.0.0.255/', 'block', 'IETF protocol assignments'],
  ['http://192.0.2.1/', 'block', 'documentation'],
  ['http://192.88.99.1/', 'block', 'reserved'],
  ['http://192.168.0.0/', 'block', 'private'],
  ['http://192.168.255.255/', 'block', 'private'],
  ['http://198.18.0.0/', 'block', 'benchmarking'],
  ['http://198.19.255.255/', 'block', 'benchmarking'],
  ['http://198.51.100.0/', 'block', 'documentation'],
  ['http://203.0.113.255/', 'block', 'documentation'],
  ['http://224.0.0.0/', 'block', 'multicast'],
  ['http://239.255.255.255/', 'block', 'multicast'],
  ['http://240.0.0.0/', 'block', 'reserved'],
  ['http://255.255.255.254/', 'block', 'reserved'],
  ['http://255.255.255.255/', 'block', 'broadcast'],
  // Other spellings of IPv4 addresses, folded by the URL parser before we judge.
  ['http://2130706433/', 'block', '127.0.0.1 is loopback'],
  ['http://0177.0.0.1/', 'block', '127.0.0.1 is loopback'],
  ['http://0x7f.0.0.1/', 'block', '127.0.0.1 is loopback'],
  ['http://0x7f000001/', 'block', '127.0.0.1 is loopback'],
  ['http://017700000001/', 'block', '127.0.0.1 is loopback'],
  ['http://127.1/', 'block', '127.0.0.1 is loopback'],
  ['http://10.1/', 'block', '10.0.0.1 is private'],
  ['http://0/', 'block', '0.0.0.0 is unspecified'],
  ['http://0xa9.0376.43518/', 'block', '169.254.169.254'],
  ['http://１２７.０.０.１/', 'block', '127.0.0.1 is loopback'],
  ['http://①②⑦.0.0.1/', 'block', '127.0.0.1 is loopback'],
  ['http://%31%32%37.0.0.1/', 'block', '127.0.0.1 is loopback'],
  ['http://127.0.0.1./', 'block', '127.0.0.1 is loopback'],
  // IPv6 ranges.
  ['http://[::1]/', 'block', 'loopback'],
  ['http://[0:0:0:0:0:0:0:1]/', 'block', 'loopback'],
  ['http://[::]/', 'block', 'unspecified'],
  ['http://[fc00::1]/', 'block', 'unique local'],
  ['http://[fdff:ffff::1]/', 'block', 'unique local'],
  ['http://[fe80::1]/', 'block', 'link-local'],
  ['http://[febf:ffff::1]/', 'block', 'link-local'],
  ['http://[fec0::1]/', 'block', 'site-local'],
  ['http://[ff02::1]/', 'block', 'multicast'],
  ['http://[2001:db8::1]/', 'block', 'documentation'],
  ['http://[3fff::1]/', 'block', 'documentation'],
  ['http://[2001:2::1]/', 'block', 'benchmarking'],
  ['http://[2001:1ff::1]/', 'block', 'IETF protocol assignments'],
  ['http://[100::1]/', 'block', 'discard-only'],
  ['http://[fbff::1]/', 'block', 'outside global unicast'],
  // IPv4 embedded in IPv6: unwrapped and judged as IPv4, in every spelling.
  ['http://[::ffff:127.0.0.1]/', 'block', 'embeds 127.0.0.1 (IPv4-mapped)'],
  ['http://[::ffff:7f00:1]/', 'block', 'embeds 127.0.0.1 (IPv4-mapped)'],
  ['http://[::FFFF:7F00:0001]/', 'block', 'embeds 127.0.0.1 (IPv4-mapped)'],
  ['http://[0:0:0:0:0:ffff:169.254.169.254]/', 'block', 'embeds 169.254.169.254 (IPv4-mapped)'],
  ['http://[0000:0000:0000:0000:0000:ffff:0a00:0001]/', 'block', 'embeds 10.0.0.1'],
  ['http://[::ffff:0:10.0.0.1]/', 'block', 'embeds 10.0.0.1 (IPv4-translated)'],
  ['http://[::127.0.0.1]/', 'block', 'embeds 127.0.0.1 (IPv4-compatible)'],
  ['http://[::a9fe:a9fe]/', 'block', 'embeds 169.254.169.254 (IPv4-compatible)'],
  ['http://[64:ff9b::127.0.0.1]/', 'block', 'embeds 127.0.0.1 (NAT64)'],
  ['http://[64:ff9b::a9fe:a9fe]/', 'block', 'embeds 169.254.169.254 (NAT64)'],
  ['http://[64:ff9b:1::c0a8:1]/', 'block', 'local-use NAT64 (64:ff9b:1::/48)'],
  ['http://[2002:7f00:1::]/', 'block', 'embeds 127.0.0.1 (6to4)'],
  ['http://[2002:a9fe:a9fe::1]/', 'block', 'embeds 169.254.169.254 (6to4)'],
  ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'block', 'embeds 127.0.0.1 (Teredo)'],
  ['http://[2001::f5ff:fffe]/', 'block', 'embeds 10.0.0.1 (Teredo)'],
  // Userinfo, backslash and fragment tricks: the host is what the WHATWG parser says it is.
  ['http://public.test@127.0.0.1/', 'block', 'carries credentials'],
  ['http://127.0.0.1@public.test/', 'block', 'carries credentials'],
  ['http://user:pass@169.254.169.254/', 'block', 'carries credentials'],
  ['http://127.0.0.1#@public.test/', 'block', '127.0.0.1 is loopback'],
  ['http://127.0.0.1?@public.test/', 'block', '127.0.0.1 is loopback'],
  ['http://public.test\\@127.0.0.1/', 'allow'],
  ['http://127.0.0.1:80\\@public.test/', 'block', '127.0.0.1 is loopback'],
  ['http:\\\\127.0.0.1\\', 'block', '127.0.0.1 is loopback'],
  ['http:///127.0.0.1/', 'block', '127.0.0.1 is loopback'],
  ['  http://127.0.0.1/  ', 'block', '127.0.0.1 is loopback'],
  // Schemes and strings that are not URLs at all.
  ['ftp://public.test/', 'block', 'scheme "ftp" is not allowed'],
  ['file:///etc/passwd', 'block', 'scheme "file"'],
  ['gopher://127.0.0.1:6379/_INFO', 'block', 'scheme "gopher"'],
  ['javascript:alert(1)', 'block', 'scheme "javascript"'],
  ['data:text/html,<h1>hi</h1>', 'block', 'scheme "data"'],
  ['ws://public.test/', 'block', 'scheme "ws"'],
  ['dict://127.0.0.1:11211/', 'block', 'scheme "dict"'],
  ['//public.test/', 'block', 'not a valid URL'],
  ['public.test', 'block', 'not a valid URL'],
  ['http://', 'block', 'not a valid URL'],
  ['http://1.2.3.4.5/', 'block', 'not a valid URL'],
  ['http://exa mple.test/', 'block', 'not a valid URL'],
  ['http://[fe80::1%25eth0]/', 'block', 'not a valid URL'],
  ['http://[::ffff:127.0.0.1/', 'block', 'not a valid URL'],
];

describe('netguard: the URL table', () => {
  it('holds at least 60 URLs', () => expect(TABLE.length).toBeGreaterThanOrEqual(60));

  it.each(TABLE)('%s -> %s', async (url, verdict, words) => {
    const result = await vetUrl(url, stub);
    expect(result.verdict, result.reason).toBe(verdict);
    if (words) expect(result.reason).toContain(words);
  });

  it('judges an IP literal as is, never asking the resolver', async () => {
    let asked = 0;
    const counting: Resolver = async () => {
      asked++;
      return [PUBLIC];
    };
    expect(await vetUrl('http://[::ffff:7f00:1]:8080/x', counting)).toMatchObject({
      verdict: 'block',
      addresses: ['::ffff:7f00:1'],
    });
    expect(await vetUrl('http://8.8.8.8/', counting)).toMatchObject({
      verdict: 'allow',
      addresses: ['8.8.8.8'],
    });
    expect(asked).toBe(0);
  });

  it('reports every answer of a name and refuses when any one is not public', async () => {
    expect(await vetUrl('http://mixed.test/', stub)).toEqual({
      verdict: 'block',
      reason: `mixed.test resolves to a refused address (one of 2 answers: ${PUBLIC}, 10.0.0.1): 10.0.0.1 is private (10.0.0.0/8)`,
      addresses: [PUBLIC, '10.0.0.1'],
    });
    expect(await vetUrl('http://bücher.example/', stub)).toMatchObject({
      verdict: 'allow',
      addresses: [PUBLIC, '2606:4700:4700::1111'],
    });
  });

  it('lets an operator allowlist name a host, and the test predicate mark an address public', async () => {
    expect((await vetUrl('http://internal.test/', stub, { allowHosts: ['INTERNAL.test.'] })).verdict).toBe(
      'allow',
    );
    expect((await vetUrl('http://internal.test/', stub, { allowHosts: ['other.test'] })).verdict).toBe(
      'block',
    );
    const loopbackIsPublic = (a: string) => a === '127.0.0.1' || addressVerdict(a).allowed;
    expect(await vetUrl('http://127.0.0.1/', stub, { isAllowedAddress: loopbackIsPublic })).toMatchObject({
      verdict: 'allow',
      reason: '127.0.0.1 is allowed by the injected address policy',
    });
    expect((await vetUrl('http://localhost/', stub, { isAllowedAddress: loopbackIsPublic })).verdict).toBe(
      'block',
    );
  });
});

describe('netguard: addressVerdict', () => {
  it.each([
    ['100.63.255.255', true],
    ['100.64.0.1', false],
    ['2001:4860:4860::8888', true],
    ['fe80::1%eth0', false],
    ['::ffff:0:0', false],
  ])('%s allowed=%s', (address, allowed) => expect(addressVerdict(address).allowed).toBe(allowed));

  it('refuses anything that is not a strict IP address rather than guessing', () => {
    for (const text of [
      '0177.0.0.1',
      '127.1',
      '0x7f000001',
      '2130706433',
      'localhost',
      '',
      '[::1]',
      '1.2.3.4 ',
    ]) {
      expect(addressVerdict(text), text).toMatchObject({ allowed: false, range: 'invalid' });
    }
  });
});

describe('netguard: the pinned dial', () => {
  /** A dial below the pin that records what it was asked to reach and connects nowhere. */
  function recorder() {
    const dialed: buildConnector.Options[] = [];
    const connector: buildConnector.connector = (options, callback) => {
      dialed.push(options);
      callback(new Error('recorded, not connected'), null);
    };
    return { dialed, connector };
  }

  it('looks the name up once and dials the vetted address, even when DNS would now answer 127.0.0.1', async () => {
    let lookups = 0;
    const rebinding: Resolver = async () => (++lookups === 1 ? [PUBLIC] : ['127.0.0.1']);
    const { dialed, connector } = recorder();
    const outcome = await guardedFetch('https://rebind.test/page', { resolver: rebinding, connector });
    expect(lookups).toBe(1);
    expect(dialed.length).toBeGreaterThan(0);
    for (const options of dialed) {
      expect(options).toMatchObject({ hostname: PUBLIC, servername: 'rebind.test', protocol: 'https:' });
    }
    expect(outcome).toMatchObject({ kind: 'failed', url: 'https://rebind.test/page' });
    expect(outcome.kind === 'failed' && outcome.reason).toContain('recorded, not connected');
  });

  it('refuses a name whose answers mix public and private without dialing at all', async () => {
    const { dialed, connector } = recorder();
    const mixed: Resolver = async () => [PUBLIC, '127.0.0.1'];
    const outcome = await guardedFetch('http://mixed.test/', { resolver: mixed, connector });
    expect(outcome).toMatchObject({ kind: 'blocked', addresses: [PUBLIC, '127.0.0.1'] });
    expect(dialed).toEqual([]);
  });

  it('keeps the hostname for TLS (SNI and certificate) and sends no SNI for an IP literal', () => {
    const base = { hostname: 'example.test', host: 'example.test', protocol: 'https:', port: '443' };
    expect(pinConnectOptions(base, PUBLIC, 'example.test')).toMatchObject({
      hostname: PUBLIC,
      host: 'example.test',
      servername: 'example.test',
    });
    const literal = { ...base, hostname: '2606:4700::1', host: '[2606:4700::1]' };
    expect(pinConnectOptions(literal, '2606:4700::1', '2606:4700::1').servername).toBeUndefined();
    expect(
      pinConnectOptions({ ...base, protocol: 'http:' }, PUBLIC, 'example.test').servername,
    ).toBeUndefined();
  });

  it('a pinned agent refuses to dial any host but its own', async () => {
    const { dialed, connector } = recorder();
    const agent = pinnedAgent(PUBLIC, 'a.test', { connector });
    await expect(request('http://b.test/', { dispatcher: agent })).rejects.toThrow(/refused to dial b\.test/);
    expect(dialed).toEqual([]);
    await agent.destroy();
  });
});
