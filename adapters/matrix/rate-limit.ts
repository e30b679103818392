// M_LIMIT_EXCEEDED: the homeserver says how long to wait (retry_after_ms); wait that long and try
// again, a few times, rather than drop a reply.

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

export interface RateLimitOptions {
  sleep: (ms: number) => Promise<void>;
  attempts?: number;
  onWait?: (ms: number, attempt: number) => void;
}

/** Runs `call`; on a rate limit, waits as told and tries again (at most `attempts` tries). */
export async function withRateLimit<T>(call: () => Promise<T>, options: RateLimitOptions): Promise<T> {
  const attempts = options.attempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const wait = rateLimitWait(error);
      if (wait === undefined || attempt >= attempts) throw error;
      options.onWait?.(wait, attempt);
      await options.sleep(wait);
    }
  }
}
