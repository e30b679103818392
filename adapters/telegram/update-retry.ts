// An update whose handling failed (the database was down, say) is not confirmed: it is tried
// again with backoff, and only after a bounded number of tries given up, so no poison update
// blocks the chat forever. Giving up is said to the owner, naming what was dropped.
import type { Update } from 'grammy/types';

export interface RetryPolicy {
  tries: number;
  firstMs: number;
  maxMs: number;
}

/** About a minute and a half in all: long enough for a database restart. */
export const DEFAULT_UPDATE_RETRY: RetryPolicy = { tries: 8, firstMs: 1000, maxMs: 30_000 };

export type UpdateOutcome = { kind: 'handled' } | { kind: 'stopped' } | { kind: 'dropped'; error: Error };

/** The wait before try `n + 1` (n ≥ 1). */
export const retryDelay = (policy: RetryPolicy, n: number) =>
  Math.min(policy.maxMs, policy.firstMs * 2 ** Math.min(n - 1, 20));

export async function handleWithRetry(
  handle: () => Promise<void>,
  policy: RetryPolicy,
  stopped: () => boolean,
  sleep: (ms: number) => Promise<void>,
): Promise<UpdateOutcome> {
  for (let n = 1; ; n++) {
    try {
      await handle();
      return { kind: 'handled' };
    } catch (error) {
      // A stop leaves the update unconfirmed: Telegram delivers it again after the restart.
      if (stopped()) return { kind: 'stopped' };
      if (n >= policy.tries) return { kind: 'dropped', error: error as Error };
      await sleep(retryDelay(policy, n));
      if (stopped()) return { kind: 'stopped' };
    }
  }
}

/** What the owner is told when an update is given up: what it was, and what to do. */
export function droppedNotice(update: Update, tries: number, error: Error): string {
  const text = update.message?.text ?? update.message?.caption;
  const what =
    text !== undefined
      ? `your message “${text.length > 80 ? `${text.slice(0, 79)}…` : text}”`
      : update.callback_query
        ? 'a button press'
        : `update ${update.update_id}`;
  return `I could not take in ${what} after ${tries} tries (${error.message}); it was dropped, so please send it again.`;
}
