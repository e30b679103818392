// `steward netguard check [--resolve HOST=ADDR]... URL`: the verdict web_fetch would reach for a
// URL, resolution included, with nothing fetched. Exit 0 when allowed, 1 when blocked, 2 for a
// usage error, so a script can test a policy with `steward netguard check URL && ...`.
import { isIP } from 'node:net';
import { UsageError } from '../../src/errors.ts';
import { staticResolver, systemResolver } from '../../src/netguard/resolve.ts';
import { vetUrl } from '../../src/netguard/vet.ts';
import { parseCommandArgs } from '../args.ts';
import type { CliIo } from '../io.ts';

/**
 * Reads repeated `--resolve HOST=ADDR` values into answers per host, in the order given (several
 * for one host are several answers, like curl's --resolve). HOST is normalized as a URL's host is.
 */
export function parseResolveFlags(values: readonly string[]): Map<string, string[]> {
  const table = new Map<string, string[]>();
  for (const value of values) {
    const at = value.indexOf('=');
    const rawHost = at > 0 ? value.slice(0, at) : '';
    const rawAddr = at > 0 ? value.slice(at + 1) : '';
    const host = /^[^/?#@:\\\s]+$/.test(rawHost) ? URL.parse(`http://${rawHost}/`)?.hostname : undefined;
    if (!host) {
      throw new UsageError(
        `--resolve '${value}': expected HOST=ADDR, e.g. --resolve example.com=93.184.215.14`,
      );
    }
    const addr = rawAddr.replace(/^\[(.*)\]$/, '$1');
    if (isIP(addr) === 0) {
      throw new UsageError(`--resolve '${value}': '${rawAddr}' is not an IPv4 or IPv6 address`);
    }
    table.set(host, [...(table.get(host) ?? []), addr]);
  }
  return table;
}

async function netguardCheck(io: CliIo, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    'netguard check',
    args,
    { resolve: { type: 'string', multiple: true } },
    true,
  );
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? 'steward netguard check needs a URL, e.g. steward netguard check https://example.com/'
        : `steward netguard check takes one URL, got ${positionals.length}`,
    );
  }
  const table = parseResolveFlags(values.resolve ?? []);
  const resolver = table.size > 0 ? staticResolver(table, systemResolver) : systemResolver;
  // Only the three contract fields, in the contract's order; nothing is fetched.
  const { verdict, reason, addresses } = await vetUrl(positionals[0] as string, resolver);
  io.stdout.write(`${JSON.stringify({ verdict, reason, addresses })}\n`);
  return verdict === 'allow' ? 0 : 1;
}

/** `steward netguard check ...`. */
export async function netguardCommand(io: CliIo, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'check') {
    throw new UsageError(
      sub === undefined
        ? 'steward netguard needs a subcommand: check [--resolve HOST=ADDR]... URL'
        : `unknown subcommand '${sub}' for steward netguard (expected check)`,
    );
  }
  return netguardCheck(io, rest);
}
