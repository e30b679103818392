// M_LIMIT_EXCEEDED: the homeserver says how long to wait (retry_after_ms); wait that long and try
// again, a few times, rather than drop a reply. A homeserver that is restarting (connection
// refused or reset, 502/503/504) is tried again too, with backoff, by calls that are safe to repeat.

const DEFAULT_WAIT_MS = 1000;
const MAX_WAIT_MS = 60_000;

/** How long a failed call asks to wait, or undefined when it failed for another reason. */
export function rateLimitWait(error: unknown): number | undefined {
  const e = error as
    | {
        errcode?: string;
        statusCode?: number;
        retryAfterMs?: number;
        body?: { errcode?: string; retry_after_ms?: number };
      }
    | undefined;
  if (!e || typeof e !== 'object') return undefined;
  const limited =
    e.errcode === 'M_LIMIT_EXCEEDED' || e.body?.errcode === 'M_LIMIT_EXCEEDED' || e.statusCode === 429;
  if (!limited) return undefined;
  const asked = e.retryAfterMs ?? e.body?.retry_after_ms;
  const ms = typeof asked === 'number' && Number.isFinite(asked) ? asked : DEFAULT_WAIT_MS;
  return Math.min(MAX_WAIT_MS, Math.max(0, ms));
}

const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ESOCKETTIMEDOUT']);
const TRANSIENT_STATUS = new Set([502, 503, 504]);
/** Tries of a call that may be repeated (its transaction id makes a repeat the same event): about 30 s. */
const TRANSIENT_ATTEMPTS = 8;

/**
 * How long to wait before trying again a call the homeserver did not answer (it is down or
 * restarting), by attempt: 0.5 s doubling to 8 s. Undefined for any other failure. Pure.
 */
export function transientWait(error: unknown, attempt: number): number | undefined {
  const e = error as { code?: unknown; statusCode?: unknown; errcode?: unknown } | undefined;
  if (!e || typeof e !== 'object' || e.errcode !== undefined) return undefined;
  const transient =
    (typeof e.code === 'string' && TRANSIENT_CODES.has(e.code)) ||
    (typeof e.statusCode === 'number' && TRANSIENT_STATUS.has(e.statusCode));
  return transient ? Math.min(8000, 500 * 2 ** Math.max(0, attempt - 1)) : undefined;
}

export interface RateLimitOptions {
  sleep: (ms: number) => Promise<void>;
  attempts?: number;
  onWait?: (ms: number, attempt: number, why: 'rate_limited' | 'unanswered') => void;
  /** The call may be repeated when the homeserver did not answer (`transientWait`). */
  repeatable?: boolean;
}

/** Runs `call`; on a rate limit, waits as told and tries again (at most `attempts` tries). */
export async function withRateLimit<T>(call: () => Promise<T>, options: RateLimitOptions): Promise<T> {
  const attempts = options.attempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const limited = rateLimitWait(error);
      const down = limited === undefined && options.repeatable ? transientWait(error, attempt) : undefined;
      const wait = limited ?? down;
      if (wait === undefined || attempt >= (down === undefined ? attempts : TRANSIENT_ATTEMPTS)) throw error;
      options.onWait?.(wait, attempt, down === undefined ? 'rate_limited' : 'unanswered');
      await options.sleep(wait);
    }
  }
}
