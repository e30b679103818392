// One parse, the WHATWG one: it is exactly what undici does with the URL, so the host we judge is
// the host that gets dialed. A string it rejects is refused; there is no second, looser attempt.
import { isIP } from 'node:net';

export const ALLOWED_SCHEMES: readonly string[] = ['http:', 'https:'];

export type Target =
  | {
      ok: true;
      url: URL;
      /** The hostname as it is dialed or resolved: punycode, lower case, IPv6 without brackets. */
      host: string;
      /** The host is an IP address, judged as is, never resolved. */
      ipLiteral: boolean;
    }
  | { ok: false; reason: string };

/** Parses a URL (or checks an already parsed one): http and https only, no credentials. */
export function parseTarget(input: string | URL): Target {
  const url = typeof input === 'string' ? URL.parse(input) : input;
  if (!url) return { ok: false, reason: 'not a valid URL (WHATWG URL parsing failed)' };
  if (!ALLOWED_SCHEMES.includes(url.protocol)) {
    return {
      ok: false,
      reason: `the scheme "${url.protocol.replace(/:$/, '')}" is not allowed; only http and https are`,
    };
  }
  // Credentials in a URL are a secret the model would echo and a classic disguise
  // (`http://public.example@10.0.0.1/`); no fetch needs them, so they are refused outright.
  if (url.username !== '' || url.password !== '') {
    return {
      ok: false,
      reason:
        'the URL carries credentials (a user name or password before "@"); remove them and use the URL without them',
    };
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  // Unreachable for http(s), whose parse demands a host; kept so an empty host can never pass.
  if (host === '') return { ok: false, reason: 'the URL has no host' };
  return { ok: true, url, host, ipLiteral: isIP(host) !== 0 };
}

/** The key a host is looked up and allowlisted by: a trailing root dot names the same host. */
export function hostKey(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

/**
 * A URL as it may be shown or logged: any user name and password replaced by `***`, so a
 * redirect target's credentials never reach a message, a log or the model.
 */
export function redactedHref(url: URL): string {
  if (url.username === '' && url.password === '') return url.href;
  const copy = new URL(url.href);
  copy.username = '***';
  copy.password = '';
  return copy.href;
}
