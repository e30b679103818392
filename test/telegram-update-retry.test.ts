// An update whose handling fails is never confirmed while it may still be handled: it is tried
// again with backoff, given up only after a bounded number of tries (with the owner told), and
// left unconfirmed at a stop. Against a fake that keeps Telegram's offset rules.
import type { Update } from 'grammy/types';
import { afterEach, describe, expect, it } from 'vitest';
import { type GetUpdatesArgs, startPolling } from '../adapters/telegram/confirmed-polling.ts';
import { droppedNotice, handleWithRetry, retryDelay } from '../adapters/telegram/update-retry.ts';
import { createLogger } from '../src/log.ts';
import { update, wait } from './support/telegram-updates.ts';

const silent = createLogger('silent', []);

function fakeTelegram() {
  let pending: Update[] = [];
  const calls: GetUpdatesArgs[] = [];
  return {
    calls,
    push: (u: Update) => pending.push(u),
    pending: () => pending.map((u) => u.update_id),
    async getUpdates(args: GetUpdatesArgs): Promise<Update[]> {
      calls.push(args);
      pending = pending.filter((u) => u.update_id >= args.offset);
      return pending.slice(0, args.limit);
    },
  };
}

describe('handleWithRetry', () => {
  const policy = { tries: 3, firstMs: 10, maxMs: 15 };
  const failing = (times: number) => {
    let n = 0;
    return async () => {
      n++;
      if (n <= times) throw new Error(`database down (${n})`);
    };
  };

  it.each([
    ['succeeds at once', 0, 'handled', [] as number[]],
    ['succeeds on the last try', 2, 'handled', [10, 15]],
    ['gives up after the last try', 5, 'dropped', [10, 15]],
  ])('%s', async (_name, failures, kind, waits) => {
    const slept: number[] = [];
    const outcome = await handleWithRetry(
      failing(failures),
      policy,
      () => false,
      async (ms) => {
        slept.push(ms);
      },
    );
    expect(outcome.kind).toBe(kind);
    expect(slept).toEqual(waits);
  });

  it('a stop ends the retries without giving up, so the update stays unconfirmed', async () => {
    let stopped = false;
    const outcome = await handleWithRetry(
      failing(10),
      policy,
      () => stopped,
      async () => {
        stopped = true;
      },
    );
    expect(outcome.kind).toBe('stopped');
  });

  it('backs off by doubling up to the cap', () => {
    const p = { tries: 10, firstMs: 1000, maxMs: 30_000 };
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelay(p, n))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000,
    ]);
  });

  it('names what was dropped, in one line', () => {
    const text = droppedNotice(update(7, 'turn the heating on'), 8, new Error('connect ECONNREFUSED'));
    expect(text).toBe(
      'I could not take in your message “turn the heating on” after 8 tries (connect ECONNREFUSED); it was dropped, so please send it again.',
    );
    expect(droppedNotice({ update_id: 9 } as Update, 2, new Error('x'))).toContain('update 9');
  });
});

describe('confirmed polling with failing handlers', () => {
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  it('does not confirm an update while its handling fails, and confirms it once it is handled', async () => {
    const telegram = fakeTelegram();
    let failures = 3;
    const handled: number[] = [];
    const dropped: number[] = [];
    const polling = startPolling({
      log: silent,
      getUpdates: (a) => telegram.getUpdates(a),
      handle: async (u) => {
        if (failures-- > 0) throw new Error('database down');
        handled.push(u.update_id);
      },
      retry: { tries: 10, firstMs: 20, maxMs: 40 },
      dropped: async (u) => {
        dropped.push(u.update_id);
      },
      timeoutSeconds: 0,
      idlePollMs: 5,
    });
    stops.push(() => polling.stop());
    telegram.push(update(1));
    await wait(() => failures <= 0, 'the failing tries');
    expect(telegram.calls.filter((c) => c.offset > 1)).toEqual([]);
    await wait(() => handled.includes(1), 'update 1 to be handled');
    await wait(() => telegram.calls.some((c) => c.offset === 2), 'update 1 to be confirmed');
    expect(handled).toEqual([1]);
    expect(dropped).toEqual([]);
  });

  it('gives a poison update up after the bounded tries, tells the owner once, and moves on', async () => {
    const telegram = fakeTelegram();
    const handled: number[] = [];
    const dropped: string[] = [];
    const polling = startPolling({
      log: silent,
      getUpdates: (a) => telegram.getUpdates(a),
      handle: async (u) => {
        if (u.update_id === 1) throw new Error('cannot parse');
        handled.push(u.update_id);
      },
      retry: { tries: 3, firstMs: 10, maxMs: 10 },
      dropped: async (u, tries, error) => {
        dropped.push(droppedNotice(u, tries, error));
      },
      timeoutSeconds: 0,
      idlePollMs: 5,
    });
    stops.push(() => polling.stop());
    telegram.push(update(1, 'poison'));
    telegram.push(update(2));
    await wait(() => telegram.calls.some((c) => c.offset === 3), 'both updates to be confirmed');
    expect(handled).toEqual([2]);
    expect(dropped).toEqual([
      'I could not take in your message “poison” after 3 tries (cannot parse); it was dropped, so please send it again.',
    ]);
  });

  it('a stop during the retries leaves the update unconfirmed for the next start', async () => {
    const telegram = fakeTelegram();
    let tries = 0;
    const polling = startPolling({
      log: silent,
      getUpdates: (a) => telegram.getUpdates(a),
      handle: async () => {
        tries++;
        throw new Error('database down');
      },
      retry: { tries: 100, firstMs: 20, maxMs: 20 },
      timeoutSeconds: 0,
      idlePollMs: 5,
      stopGraceMs: 2000,
    });
    telegram.push(update(1));
    await wait(() => tries >= 2, 'two tries');
    await polling.stop();
    expect(telegram.calls.filter((c) => c.offset > 1)).toEqual([]);
    expect(telegram.pending()).toEqual([1]);
  });
});
