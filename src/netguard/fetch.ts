// A GET that can only reach what netguard allowed. Every hop (the first URL and each redirect) is
// parsed once, vetted, and dialed at its vetted address by its own pinned agent. Redirects are
// followed here, never by undici, so no hop escapes the check. Environment proxies play no part:
// the request goes through the agent given, and undici's Agent reads no proxy variables.
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { PinnedAgentOptions } from './pinned-agent.ts';
import { type Resolver, systemResolver } from './resolve.ts';
import { parseTarget, redactedHref } from './url.ts';
import { type VetOptions, vetTarget } from './vet.ts';

export interface FetchLimits {
  /** Most body bytes read (after decompression); past it the body is cut and `truncated` set. */
  maxBytes: number;
  /** Wall-clock limit for everything: lookups, every hop, the body. */
  timeoutMs: number;
  /** Redirects followed; capped at MAX_REDIRECTS whatever is asked. */
  maxRedirects: number;
}

export const MAX_REDIRECTS = 5;
export const DEFAULT_FETCH_LIMITS: FetchLimits = {
  maxBytes: 2 * 1024 * 1024,
  timeoutMs: 20_000,
  maxRedirects: MAX_REDIRECTS,
};

export interface GuardedFetchOptions {
  limits?: Partial<FetchLimits>;
  resolver?: Resolver;
  /** The address policy; `allowHosts` belongs to operator-configured endpoints only. */
  vet?: VetOptions;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Whether to read a body of this content type; a refused type ends as `unwanted`, unread. */
  acceptType?: (contentType: string) => boolean;
  /** Test seam for the dial below the pin (see PinnedAgentOptions). */
  connector?: PinnedAgentOptions['connector'];
}

/** Every way a fetch ends, as data. `url` is the hop it ended on. */
export type FetchOutcome =
  | {
      kind: 'ok';
      url: string;
      status: number;
      contentType: string;
      body: Buffer;
      /** The size cap was hit: `body` holds only the first `maxBytes`. */
      truncated: boolean;
      redirects: string[];
    }
  | { kind: 'blocked'; url: string; reason: string; addresses: string[]; redirects: string[] }
  | { kind: 'unwanted'; url: string; status: number; contentType: string }
  | { kind: 'limit'; limit: 'timeout' | 'redirects'; url: string; reason: string }
  | { kind: 'failed'; url: string; reason: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const DEFAULT_HEADERS: Record<string, string> = {
  'user-agent': 'Mozilla/5.0 (compatible; steward-web-fetch/0.1)',
  accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.1',
  'accept-encoding': 'gzip, deflate, br',
};

/** A URL as it appears in a message: whole when short, clipped when a server made it long. */
export function clip(href: string, max = 200): string {
  return href.length <= max ? href : `${href.slice(0, max)}...`;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

const header = (value: string | string[] | undefined): string =>
  (Array.isArray(value) ? value[0] : value)?.trim() ?? '';

/** Settles with `promise`, or rejects as soon as `signal` aborts (a lookup cannot be cancelled). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The body decoded per Content-Encoding, or null for an encoding we do not read. */
function decoded(body: Readable, encoding: string): AsyncIterable<Buffer> | null {
  if (encoding === '' || encoding === 'identity') return body;
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : null;
  // pipeline destroys both ends on an error or when we stop reading early.
  return decoder ? pipeline(body, decoder, () => {}) : null;
}

/** Drops a body we will not read; undici reports an unfinished body as aborted, which is expected here. */
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

async function readCapped(chunks: AsyncIterable<Buffer>, max: number) {
  const kept: Buffer[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    if (chunk.length > max - size) {
      kept.push(chunk.subarray(0, max - size));
      // Leaving the loop destroys the stream: nothing past the cap is read.
      return { body: Buffer.concat(kept), truncated: true };
    }
    kept.push(chunk);
    size += chunk.length;
  }
  return { body: Buffer.concat(kept), truncated: false };
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}${typeof code === 'string' && !error.message.includes(code) ? ` (${code})` : ''}`;
}

/**
 * GETs a URL through netguard: vetted, pinned, redirects re-vetted (at most 5), size-capped and
 * time-limited. Never throws; every ending is a FetchOutcome. No request body is ever sent, so a
 * 307/308 has nothing to replay to the next host.
 */
export async function guardedFetch(rawUrl: string, options: GuardedFetchOptions = {}): Promise<FetchOutcome> {
  const limits = { ...DEFAULT_FETCH_LIMITS, ...options.limits };
  const maxRedirects = Math.min(Math.max(0, limits.maxRedirects), MAX_REDIRECTS);
  const resolver = options.resolver ?? systemResolver;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error('total timeout')), limits.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
  const redirects: string[] = [];
  let current = rawUrl;
  try {
    let target = parseTarget(rawUrl);
    const firstOrigin = target.ok ? target.url.origin : '';
    for (;;) {
      const vet = await untilAborted(vetTarget(target, resolver, options.vet), signal);
      if (!target.ok || vet.verdict === 'block') {
        return { kind: 'blocked', url: current, reason: vet.reason, addresses: vet.addresses, redirects };
      }
      const { url, host } = target;
      // The first vetted answer is the one dialed; every answer passed, so any would be fine.
      const address = vet.addresses[0];
      if (address === undefined) return { kind: 'failed', url: current, reason: 'no vetted address to dial' };
      // undici loads with the first fetch, not with every process that could fetch.
      const [{ request }, { pinnedAgent }] = await Promise.all([
        import('undici'),
        import('./pinned-agent.ts'),
      ]);
      const agent = pinnedAgent(address, host, { connector: options.connector });
      try {
        const response = await request(`${url.origin}${url.pathname}${url.search}`, {
          method: 'GET',
          dispatcher: agent,
          // Caller headers (an operator's credentials, say) never follow a redirect to another origin.
          headers: url.origin === firstOrigin ? { ...DEFAULT_HEADERS, ...options.headers } : DEFAULT_HEADERS,
          signal,
        });
        const location = header(response.headers.location);
        if (REDIRECTS.has(response.statusCode) && location !== '') {
          discard(response.body);
          // The Location header is the server's text: it is only ever shown re-serialized and clipped.
          const next = URL.parse(location, url.href);
          if (redirects.length >= maxRedirects) {
            const reason = `more than ${maxRedirects} redirects (the redirect limit); the next one pointed to ${clip(next ? redactedHref(next) : 'an invalid URL')}`;
            return { kind: 'limit', limit: 'redirects', url: current, reason };
          }
          if (!next) return { kind: 'failed', url: current, reason: 'redirected to an invalid URL' };
          current = redactedHref(next);
          redirects.push(current);
          target = parseTarget(next);
          continue;
        }
        const contentType = header(response.headers['content-type']);
        if (options.acceptType && !options.acceptType(contentType)) {
          discard(response.body);
          return { kind: 'unwanted', url: current, status: response.statusCode, contentType };
        }
        const encoding = header(response.headers['content-encoding']).toLowerCase();
        // Stopping at the size cap aborts the rest of the body on purpose.
        response.body.on('error', () => {});
        const chunks = decoded(response.body, encoding);
        if (!chunks) {
          discard(response.body);
          return { kind: 'failed', url: current, reason: `unsupported content encoding "${encoding}"` };
        }
        const { body, truncated } = await readCapped(chunks, limits.maxBytes);
        return {
          kind: 'ok',
          url: current,
          status: response.statusCode,
          contentType,
          body,
          truncated,
          redirects,
        };
      } finally {
        agent.destroy().catch(() => {});
      }
    }
  } catch (error) {
    if (deadline.signal.aborted) {
      const reason = `no complete response within the total timeout of ${formatDuration(limits.timeoutMs)}`;
      return { kind: 'limit', limit: 'timeout', url: current, reason };
    }
    if (options.signal?.aborted) return { kind: 'failed', url: current, reason: 'cancelled' };
    return { kind: 'failed', url: current, reason: describe(error) };
  } finally {
    clearTimeout(timer);
  }
}
