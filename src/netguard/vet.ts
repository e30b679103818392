// The verdict on one URL: the scheme, then every address the host stands for. One refused address
// refuses the URL, since whichever answer the connection used could be the private one.
import { type AddressVerdict, addressVerdict } from './address.ts';
import { type Resolver, systemResolver } from './resolve.ts';
import { hostKey, parseTarget, type Target } from './url.ts';

export interface VetResult {
  verdict: 'allow' | 'block';
  reason: string;
  /** The addresses judged: the literal, or every answer of the resolver (empty when none). */
  addresses: string[];
}

export interface VetOptions {
  /**
   * TEST SEAM ONLY: replaces the address policy so a test server on loopback can pass for public.
   * Production code never sets it; the tool and the CLI have no path that could.
   */
  isAllowedAddress?: (address: string) => boolean;
  /**
   * Hosts an operator named in configuration (webhooks, MCP servers) whose addresses are not
   * judged. Never filled from anything a model wrote: web_fetch has no way to pass it.
   */
  allowHosts?: readonly string[];
}

function judge(address: string, options: VetOptions): AddressVerdict {
  const verdict = addressVerdict(address);
  if (!options.isAllowedAddress) return verdict;
  const allowed = options.isAllowedAddress(address);
  if (allowed === verdict.allowed) return verdict;
  const word = allowed ? 'allowed' : 'refused';
  return { allowed, range: verdict.range, reason: `${address} is ${word} by the injected address policy` };
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
}

const block = (reason: string, addresses: string[] = []): VetResult => ({
  verdict: 'block',
  reason,
  addresses,
});

/** Vets a parsed target; `vetUrl` is the same for a URL that has not been parsed yet. */
export async function vetTarget(
  target: Target,
  resolver: Resolver = systemResolver,
  options: VetOptions = {},
): Promise<VetResult> {
  if (!target.ok) return block(target.reason);
  const { host } = target;
  const allowlisted = (options.allowHosts ?? []).some((h) => hostKey(h) === hostKey(host));

  let addresses: string[];
  if (target.ipLiteral) {
    addresses = [host];
  } else {
    try {
      addresses = [...new Set(await resolver(host))];
    } catch (error) {
      return block(`${host} does not resolve (${errorCode(error)})`);
    }
    if (addresses.length === 0) return block(`${host} does not resolve (no addresses)`);
  }
  if (allowlisted) {
    return { verdict: 'allow', reason: `${host} is on the operator's allowlist`, addresses };
  }

  const refused = addresses.map((a) => judge(a, options)).find((v) => !v.allowed);
  if (refused) {
    if (target.ipLiteral) return block(refused.reason, addresses);
    const all = addresses.length > 1 ? ` (one of ${addresses.length} answers: ${addresses.join(', ')})` : '';
    return block(`${host} resolves to a refused address${all}: ${refused.reason}`, addresses);
  }
  const reason = target.ipLiteral
    ? judge(host, options).reason
    : `every address ${host} resolves to is ${options.isAllowedAddress ? 'allowed by the injected address policy' : 'global unicast'}`;
  return { verdict: 'allow', reason, addresses };
}

/**
 * Judges a URL as web_fetch would, fetching nothing: http(s) only, the host resolved here (every
 * A and AAAA answer), and allowed only when every address is global unicast. Errors are verdicts.
 */
export function vetUrl(
  url: string | URL,
  resolver: Resolver = systemResolver,
  options: VetOptions = {},
): Promise<VetResult> {
  return vetTarget(parseTarget(url), resolver, options);
}
