// Name resolution is injected so the vetting is testable and so `steward netguard check --resolve`
// can answer for a host; production uses the system resolver (getaddrinfo, /etc/hosts included).
import { lookup } from 'node:dns/promises';
import { hostKey } from './url.ts';

/** Every address a name resolves to (A and AAAA), in the resolver's order. Throws when it does not. */
export type Resolver = (hostname: string) => Promise<readonly string[]>;

// getaddrinfo cannot be cancelled; a resolver that never answers must still end the check.
const LOOKUP_TIMEOUT_MS = 10_000;

export const systemResolver: Resolver = async (hostname) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`lookup of ${hostname} timed out`), { code: 'ETIMEOUT' })),
      LOOKUP_TIMEOUT_MS,
    );
  });
  try {
    const answers = await Promise.race([lookup(hostname, { all: true, order: 'verbatim' }), timeout]);
    return answers.map((a) => a.address);
  } finally {
    clearTimeout(timer);
  }
};

/**
 * Answers the listed hosts from the table (like curl's --resolve) and asks `fallback` for the rest.
 * Keys are compared as `hostKey` does: case and a trailing dot do not matter.
 */
export function staticResolver(
  table: ReadonlyMap<string, readonly string[]>,
  fallback: Resolver = systemResolver,
): Resolver {
  const byKey = new Map([...table].map(([host, addrs]) => [hostKey(host), addrs] as const));
  return async (hostname) => byKey.get(hostKey(hostname)) ?? fallback(hostname);
}
