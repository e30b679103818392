// Network failures and 5xx answers are retried a few times with growing pauses (429 is the
// auto-retry plugin's). A message is sent again only when the connection was never made, so a
// reply whose answer was lost on the way back is not posted twice; edits and the like are safe to
// repeat. getUpdates is left to the poller, which has its own backoff.
import { HttpError, type Transformer } from 'grammy';

/** Errors that mean the request never reached Telegram. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);
/** Methods that post something new: repeating them after a lost answer would post it twice. */
const POSTING = /^(send|copy|forward)/;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function neverConnected(error: HttpError): boolean {
  const cause = error.error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = cause?.code ?? cause?.cause?.code;
  return typeof code === 'string' && NOT_CONNECTED.has(code);
}

export function transientRetry(delaysMs: readonly number[] = [1000, 2000, 4000, 8000]): Transformer {
  return async (prev, method, payload, signal) => {
    if (method === 'getUpdates') return prev(method, payload, signal);
    for (let attempt = 0; ; attempt++) {
      const delay = delaysMs[attempt];
      try {
        const result = await prev(method, payload, signal);
        if (result.ok || !(result.error_code >= 500) || delay === undefined) return result;
      } catch (error) {
        const retryable =
          error instanceof HttpError && !signal?.aborted && (!POSTING.test(method) || neverConnected(error));
        if (!retryable || delay === undefined) throw error;
      }
      await sleep(delay);
    }
  };
}
