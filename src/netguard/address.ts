// Which addresses a model-supplied URL may reach: global unicast, nothing else. The tables name
// every special-purpose range we refuse (IANA's IPv4 and IPv6 special-purpose registries), so a
// refusal can say which range it was; ipaddr.js does the bit matching, never a regex.
// IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo, ISATAP) are
// unwrapped and the IPv4 inside is judged, because that is where such a packet ends up. Local-use
// NAT64 is refused whole: its IPv4 side is whatever the operator's translator makes of it.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type IPv4 = InstanceType<typeof ipaddr.IPv4>;
type IPv6 = InstanceType<typeof ipaddr.IPv6>;

export interface AddressVerdict {
  allowed: boolean;
  /** The range the address falls in: "loopback", "private", ... or "global unicast". */
  range: string;
  /** One line for a person, e.g. "127.0.0.1 is loopback (127.0.0.0/8)". */
  reason: string;
}

interface Range<A> {
  net: [A, number];
  cidr: string;
  name: string;
}

const v4 = (cidr: string, name: string): Range<IPv4> => ({ net: ipaddr.IPv4.parseCIDR(cidr), cidr, name });
const v6 = (cidr: string, name: string): Range<IPv6> => ({ net: ipaddr.IPv6.parseCIDR(cidr), cidr, name });

// First match wins, so the broadcast address is named before the reserved block holding it.
const IPV4_REFUSED: readonly Range<IPv4>[] = [
  v4('0.0.0.0/8', 'unspecified ("this network")'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'carrier-grade NAT'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'), // cloud metadata (169.254.169.254) lives here
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'IETF protocol assignments'),
  v4('192.0.2.0/24', 'documentation (TEST-NET-1)'),
  v4('192.88.99.0/24', 'reserved (former 6to4 relay anycast)'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'benchmarking'),
  v4('198.51.100.0/24', 'documentation (TEST-NET-2)'),
  v4('203.0.113.0/24', 'documentation (TEST-NET-3)'),
  v4('224.0.0.0/4', 'multicast'),
  v4('255.255.255.255/32', 'broadcast'),
  v4('240.0.0.0/4', 'reserved'),
];

const IPV6_REFUSED: readonly Range<IPv6>[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('fc00::/7', 'unique local (ULA)'),
  v6('fe80::/10', 'link-local'),
  v6('fec0::/10', 'site-local (deprecated)'),
  v6('ff00::/8', 'multicast'),
  v6('100::/64', 'discard-only'),
  v6('2001:db8::/32', 'documentation'),
  v6('3fff::/20', 'documentation'),
  v6('2001:2::/48', 'benchmarking'),
  v6('2001:10::/28', 'ORCHID (deprecated)'),
  v6('2001:20::/28', 'ORCHIDv2'),
  v6('2001::/23', 'IETF protocol assignments'),
  // RFC 8215: operators number it from their own IPv4 space, so the IPv4 inside says nothing.
  v6('64:ff9b:1::/48', 'local-use NAT64'),
  v6('5f00::/16', 'segment routing (SRv6)'),
];

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

const last32 = (bytes: number[]): number[] => bytes.slice(12, 16);

interface Embedding {
  net: [IPv6, number];
  name: string;
  /** The IPv4 address the form carries, from the 16 address bytes. */
  extract: (bytes: number[]) => number[];
  /** A second IPv4 address the packet passes through (Teredo's server), judged the same way. */
  via?: (bytes: number[]) => number[];
}

const embedding = (
  cidr: string,
  name: string,
  extract: Embedding['extract'],
  via?: Embedding['via'],
): Embedding => ({ net: ipaddr.IPv6.parseCIDR(cidr), name, extract, via });

// Checked after :: and ::1, which sit inside ::/96 but are not IPv4-compatible addresses.
const EMBEDDINGS: readonly Embedding[] = [
  embedding('::ffff:0:0/96', 'IPv4-mapped', last32),
  embedding('::ffff:0:0:0/96', 'IPv4-translated', last32),
  embedding('::/96', 'IPv4-compatible', last32),
  embedding('64:ff9b::/96', 'NAT64', last32),
  embedding('2002::/16', '6to4', (b) => b.slice(2, 6)),
  // Teredo names two IPv4 hosts: its server (bits 32-63) and the client, bit-inverted in the last
  // 32 bits; the packet passes both, so both must be public.
  embedding(
    '2001::/32',
    'Teredo',
    (b) => last32(b).map((x) => ~x & 255),
    (b) => b.slice(4, 8),
  ),
];

/**
 * ISATAP (RFC 5214) puts an IPv4 address in the interface identifier under any prefix:
 * `…:0:5efe:a.b.c.d`, or `…:200:5efe:a.b.c.d` (the u/g bits may be set), and a router for the
 * prefix forwards to that IPv4 address.
 */
function isatapInner(bytes: number[]): number[] | null {
  const [b8, b9, b10, b11] = bytes.slice(8, 12) as [number, number, number, number];
  return (b8 & 0xfc) === 0 && b9 === 0 && b10 === 0x5e && b11 === 0xfe ? last32(bytes) : null;
}

function judgeV4(addr: IPv4, shown: string): AddressVerdict {
  const hit = IPV4_REFUSED.find((r) => addr.match(r.net));
  if (hit) return { allowed: false, range: hit.name, reason: `${shown} is ${hit.name} (${hit.cidr})` };
  return { allowed: true, range: 'global unicast', reason: `${shown} is global unicast` };
}

function judgeV6(addr: IPv6, shown: string): AddressVerdict {
  const special = IPV6_REFUSED.slice(0, 2).find((r) => addr.match(r.net));
  if (special) return refusedV6(special, shown);
  const bytes = addr.toByteArray();
  const wrapper = EMBEDDINGS.find((e) => addr.match(e.net));
  if (wrapper) {
    const verdict = judgeEmbedded(shown, wrapper.extract(bytes), wrapper.name);
    if (!verdict.allowed || !wrapper.via) return verdict;
    const via = judgeEmbedded(shown, wrapper.via(bytes), `${wrapper.name} server`);
    return via.allowed ? verdict : via;
  }
  const hit = IPV6_REFUSED.find((r) => addr.match(r.net));
  if (hit) return refusedV6(hit, shown);
  if (!addr.match(GLOBAL_UNICAST_V6)) {
    return {
      allowed: false,
      range: 'reserved',
      reason: `${shown} is reserved (outside global unicast 2000::/3)`,
    };
  }
  const isatap = isatapInner(bytes);
  if (isatap) return judgeEmbedded(shown, isatap, 'ISATAP');
  return { allowed: true, range: 'global unicast', reason: `${shown} is global unicast` };
}

/** The verdict on an IPv6 address that carries an IPv4 one: the IPv4 address's verdict. */
function judgeEmbedded(shown: string, inner4: number[], form: string): AddressVerdict {
  const inner = new ipaddr.IPv4(inner4);
  const verdict = judgeV4(inner, inner.toString());
  const what = `${shown} embeds ${inner} (${form})`;
  const reason = verdict.allowed ? `${what}, which is global unicast` : `${what}; ${verdict.reason}`;
  return { allowed: verdict.allowed, range: verdict.range, reason };
}

function refusedV6(r: Range<IPv6>, shown: string): AddressVerdict {
  return { allowed: false, range: r.name, reason: `${shown} is ${r.name} (${r.cidr})` };
}

/**
 * Judges one IP address in canonical text form (what a resolver answers or a URL's hostname
 * holds). Anything that is not a strict IPv4 dotted quad or IPv6 address is refused: the lenient
 * forms (octal, hex, short) are the URL parser's business, already folded by the time we get here.
 */
export function addressVerdict(address: string): AddressVerdict {
  const family = isIP(address);
  if (family === 4) return judgeV4(ipaddr.IPv4.parse(address), address);
  if (family === 6) return judgeV6(ipaddr.IPv6.parse(address), address);
  return { allowed: false, range: 'invalid', reason: `${JSON.stringify(address)} is not an IP address` };
}
