// Security round 2 for netguard: both sides of every boundary added (local-use NAT64, ISATAP,
// Teredo's server, ORCHID), odd IPv4 spellings as the WHATWG parser folds them, and URLs with
// credentials refused in the first URL and in every redirect, never echoed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addressVerdict,
  guardedFetch,
  parseTarget,
  redactedHref,
  staticResolver,
  vetUrl,
} from '../src/netguard/index.ts';

// [address, allowed, words the reason must contain]
const ADDRESSES: Array<[string, boolean, string]> = [
  // Well-known NAT64 (RFC 6052): the IPv4 inside is judged, on both sides of its ranges.
  ['64:ff9b::808:808', true, 'embeds 8.8.8.8 (NAT64), which is global unicast'],
  ['64:ff9b::7f00:1', false, 'embeds 127.0.0.1 (NAT64); 127.0.0.1 is loopback'],
  ['64:ff9b::a00:1', false, '10.0.0.1 is private'],
  ['64:ff9b::6440:1', false, 'carrier-grade NAT'],
  ['64:ff9b::643f:ffff', true, 'embeds 100.63.255.255'],
  ['64:ff9b::c000:0', false, 'IETF protocol assignments'],
  ['64:ff9b::c612:1', false, 'benchmarking'],
  ['64:ff9b::f000:1', false, 'reserved (240.0.0.0/4)'],
  ['64:ff9b::ffff:ffff', false, 'broadcast'],
  ['64:ff9b::e000:1', false, 'multicast'],
  ['64:ff9b::1:0:0', false, 'outside global unicast'], // beside the /96: not NAT64 at all
  // Local-use NAT64 (RFC 8215): refused whole, whatever IPv4 it seems to carry.
  ['64:ff9b:1::808:808', false, 'local-use NAT64 (64:ff9b:1::/48)'],
  ['64:ff9b:1::', false, 'local-use NAT64'],
  ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', false, 'local-use NAT64'],
  ['64:ff9b:2::808:808', false, 'outside global unicast'],
  ['64:ff9b:0:ffff:ffff:ffff:ffff:ffff', false, 'outside global unicast'],
  // 6to4 (2002::/16): the IPv4 in bits 16-47.
  ['2002:808:808::1', true, 'embeds 8.8.8.8 (6to4)'],
  ['2002:a00:1::1', false, 'embeds 10.0.0.1 (6to4); 10.0.0.1 is private'],
  ['2002:c0a8:101::', false, '192.168.1.1 is private'],
  ['2002::1', false, '0.0.0.0 is unspecified'],
  ['2003::1', true, 'global unicast'],
  // Teredo (2001::/32): the client (inverted) and the server must both be public.
  ['2001:0:808:808:0:0:f7f7:f7f7', true, 'embeds 8.8.8.8 (Teredo)'],
  ['2001:0:a00:1:0:0:f7f7:f7f7', false, 'embeds 10.0.0.1 (Teredo server)'],
  ['2001:0:7f00:1:0:0:f7f7:f7f7', false, '127.0.0.1 is loopback'],
  ['2001:0:808:808:0:0:80ff:fffe', false, 'embeds 127.0.0.1 (Teredo)'],
  ['2001:1::1', false, 'IETF protocol assignments'],
  // ISATAP: an IPv4 address in the interface identifier under any global prefix.
  ['2001:4860:1:2:0:5efe:808:808', true, 'embeds 8.8.8.8 (ISATAP)'],
  ['2001:4860:1:2:0:5efe:a00:1', false, 'embeds 10.0.0.1 (ISATAP); 10.0.0.1 is private'],
  ['2001:4860:1:2:200:5efe:a9fe:a9fe', false, 'embeds 169.254.169.254 (ISATAP)'],
  ['2001:4860:1:2:300:5efe:7f00:1', false, 'embeds 127.0.0.1 (ISATAP)'],
  ['2001:4860:1:2:400:5efe:7f00:1', true, 'global unicast'], // not the ISATAP identifier
  ['2001:4860:1:2:0:5eff:7f00:1', true, 'global unicast'],
  ['fe80::5efe:a00:1', false, 'link-local'],
  ['fd00::5efe:a00:1', false, 'unique local'],
  // IPv4-mapped, -translated and -compatible forms.
  ['::ffff:808:808', true, 'IPv4-mapped'],
  ['::ffff:a9fe:a9fe', false, '169.254.169.254 is link-local'],
  ['::ffff:0:a00:1', false, 'IPv4-translated'],
  ['::a00:1', false, 'IPv4-compatible'],
  ['::2', false, 'IPv4-compatible'],
  // The special IPv6 ranges, refused side and the allowed neighbour.
  ['fec0::1', false, 'site-local'],
  ['feff:ffff::1', false, 'site-local'],
  ['fc00::1', false, 'unique local'],
  ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false, 'unique local'],
  ['100::1', false, 'discard-only (100::/64)'],
  ['100:0:0:1::1', false, 'outside global unicast'],
  ['2001:2::1', false, 'benchmarking'],
  ['2001:2:0:ffff::1', false, 'benchmarking'],
  ['2001:3::1', false, 'IETF protocol assignments'],
  ['2001:10::1', false, 'ORCHID (deprecated)'],
  ['2001:20::1', false, 'ORCHIDv2 (2001:20::/28)'],
  ['2001:2f:ffff::1', false, 'ORCHIDv2'],
  ['2001:200::1', true, 'global unicast'],
  ['2001:db8::1', false, 'documentation (2001:db8::/32)'],
  ['2001:db8:ffff:ffff::1', false, 'documentation'],
  ['2001:db9::1', true, 'global unicast'],
  ['3fff::1', false, 'documentation (3fff::/20)'],
  ['3fff:fff:ffff::1', false, 'documentation'],
  ['3fff:1000::1', true, 'global unicast'],
  ['ff02::1', false, 'multicast'],
  ['ff0e::1', false, 'multicast'],
  ['1fff:ffff::1', false, 'outside global unicast'],
  ['4000::1', false, 'outside global unicast'],
  // IPv4 boundaries.
  ['0.0.0.0', false, 'unspecified'],
  ['0.255.255.255', false, 'unspecified'],
  ['1.0.0.0', true, 'global unicast'],
  ['100.64.0.0', false, 'carrier-grade NAT (100.64.0.0/10)'],
  ['100.127.255.255', false, 'carrier-grade NAT'],
  ['100.128.0.0', true, 'global unicast'],
  ['192.0.0.0', false, 'IETF protocol assignments (192.0.0.0/24)'],
  ['192.0.0.255', false, 'IETF protocol assignments'],
  ['192.0.1.0', true, 'global unicast'],
  ['198.17.255.255', true, 'global unicast'],
  ['198.18.0.0', false, 'benchmarking (198.18.0.0/15)'],
  ['198.19.255.255', false, 'benchmarking'],
  ['198.20.0.0', true, 'global unicast'],
  ['223.255.255.255', true, 'global unicast'],
  ['224.0.0.1', false, 'multicast'],
  ['240.0.0.1', false, 'reserved'],
  ['255.255.255.255', false, 'broadcast'],
];

describe('netguard round 2: addresses', () => {
  it.each(ADDRESSES)('%s allowed=%s (%s)', (address, allowed, words) => {
    const verdict = addressVerdict(address);
    expect(verdict.allowed).toBe(allowed);
    expect(verdict.reason).toContain(words);
  });
});

const resolver = staticResolver(
  new Map([
    ['public.test', ['93.184.215.14']],
    ['nat64.test', ['64:ff9b:1::5db8:d70e']],
  ]),
  async (host) => {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  },
);

// [url, verdict, words the reason must contain]
const URLS: Array<[string, 'allow' | 'block', string]> = [
  // Odd IPv4 spellings: the WHATWG parser folds them, and the folded address is judged.
  ['http://0x7f.1/', 'block', '127.0.0.1 is loopback'],
  ['http://2130706433/', 'block', '127.0.0.1 is loopback'],
  ['http://127.1/', 'block', '127.0.0.1 is loopback'],
  ['http://0x7F.0x0.0x0.0x1/', 'block', '127.0.0.1 is loopback'],
  ['http://0300.0250.0.1/', 'block', '192.168.0.1 is private'],
  ['http://0xa9fea9fe/', 'block', '169.254.169.254 is link-local'],
  ['http://100.64.1/', 'block', '100.64.0.1 is carrier-grade NAT'],
  ['http://4294967295/', 'block', 'broadcast'],
  ['http://0x08.0x08.0x08.0x08/', 'allow', '8.8.8.8 is global unicast'],
  ['http://134744072/', 'allow', '8.8.8.8 is global unicast'],
  ['http://[::ffff:127.0.0.1]/', 'block', 'embeds 127.0.0.1'],
  ['http://[64:ff9b::127.0.0.1]/', 'block', 'embeds 127.0.0.1 (NAT64)'],
  ['http://[64:ff9b:1::127.0.0.1]/', 'block', 'local-use NAT64'],
  ['http://[64:ff9b::8.8.8.8]/', 'allow', 'embeds 8.8.8.8 (NAT64)'],
  ['http://nat64.test/', 'block', 'local-use NAT64'],
  // Credentials: refused whatever the host, with the fix named and the secret not repeated.
  ['http://user:pass@public.test/', 'block', 'carries credentials'],
  ['http://evil@127.0.0.1/', 'block', 'carries credentials'],
  ['http://user@public.test/', 'block', 'remove them'],
  ['http://:secret@public.test/', 'block', 'carries credentials'],
  ['http://@public.test/', 'allow', 'every address public.test resolves to'], // empty userinfo is none
  ['https://a%40b:c@public.test/', 'block', 'carries credentials'],
  ['http://public.test/@127.0.0.1', 'allow', 'every address'], // the @ is in the path
  ['http://public.test\\@127.0.0.1/', 'allow', 'every address'],
  ['http://public.test/?u=user:pass@x', 'allow', 'every address'],
];

describe('netguard round 2: URLs', () => {
  it.each(URLS)('%s -> %s', async (url, verdict, words) => {
    const result = await vetUrl(url, resolver);
    expect(result.verdict).toBe(verdict);
    expect(result.reason).toContain(words);
    expect(result.reason).not.toMatch(/:pass|secret|evil|a%40b/);
    expect(result.reason.split('\n')).toHaveLength(1);
  });

  it('refuses credentials at parse time, before any lookup', async () => {
    let lookups = 0;
    const counting = async () => {
      lookups++;
      return ['93.184.215.14'];
    };
    expect(parseTarget('http://u:p@public.test/')).toMatchObject({ ok: false });
    expect(await vetUrl('http://u:p@public.test/', counting)).toMatchObject({
      verdict: 'block',
      addresses: [],
    });
    expect(lookups).toBe(0);
  });

  it('redacts credentials from a URL that is shown', () => {
    expect(redactedHref(new URL('http://u:p@h.test/x'))).toBe('http://***@h.test/x');
    expect(redactedHref(new URL('http://u@h.test/'))).toBe('http://***@h.test/');
    expect(redactedHref(new URL('http://h.test/a@b'))).toBe('http://h.test/a@b');
  });
});

describe('netguard round 2: credentials in a redirect', () => {
  let server: Server;
  let port = 0;
  let hits: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/to-creds')
        res.writeHead(302, { location: `http://admin:hunter2@site.test:${port}/in` });
      else if (req.url === '/to-user') res.writeHead(301, { location: 'http://evil@127.0.0.1/' });
      else res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('body');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const options = () => ({
    resolver: staticResolver(new Map([['site.test', ['127.0.0.1']]])),
    vet: { isAllowedAddress: (a: string) => a === '127.0.0.1' },
    limits: { timeoutMs: 2000 },
  });

  it('refuses a redirect to a URL with credentials and never shows them', async () => {
    hits = [];
    const outcome = await guardedFetch(`http://site.test:${port}/to-creds`, options());
    expect(outcome).toMatchObject({
      kind: 'blocked',
      reason: expect.stringContaining('carries credentials'),
    });
    expect(JSON.stringify(outcome)).not.toContain('hunter2');
    expect(JSON.stringify(outcome)).not.toContain('admin');
    expect(hits).toEqual(['/to-creds']);

    const second = await guardedFetch(`http://site.test:${port}/to-user`, options());
    expect(second).toMatchObject({ kind: 'blocked', reason: expect.stringContaining('remove them') });
    expect(JSON.stringify(second)).not.toContain('evil');
  });

  it('still follows an ordinary redirect (the control)', async () => {
    const outcome = await guardedFetch(`http://site.test:${port}/plain`, options());
    expect(outcome).toMatchObject({ kind: 'ok', status: 200 });
  });
});
