// How the Telegram channel talks to the Bot API over time: updates are confirmed only once handled
// (against a fake that keeps Telegram's offset rules, which the emulator ignores), failures back
// off, a 409 ends the channel with one error, edits are paced, and only safe calls are retried.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Api, GrammyError, HttpError } from 'grammy';
import type { Update } from 'grammy/types';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type GetUpdatesArgs, startPolling, updateLedger } from '../adapters/telegram/confirmed-polling.ts';
import { TelegramConflictError } from '../adapters/telegram/errors.ts';
import { liveMessage } from '../adapters/telegram/live-message.ts';
import { telegramChannel } from '../adapters/telegram/telegram-channel.ts';
import { telegramOut } from '../adapters/telegram/telegram-out.ts';
import { transientRetry } from '../adapters/telegram/transient-retry.ts';
import type { ChannelPort } from '../src/channel/port.ts';
import { createLogger } from '../src/log.ts';
import { update, wait } from './support/telegram-updates.ts';

const silent = createLogger('silent', []);

/** Telegram's offset rules: a call with offset N forgets every update below N; the rest come again. */
function fakeTelegram() {
  let pending: Update[] = [];
  let wake = () => {};
  const calls: GetUpdatesArgs[] = [];
  return {
    calls,
    push(u: Update) {
      pending.push(u);
      wake();
    },
    pending: () => pending.map((u) => u.update_id),
    async getUpdates(args: GetUpdatesArgs, signal: AbortSignal): Promise<Update[]> {
      calls.push(args);
      pending = pending.filter((u) => u.update_id >= args.offset);
      if (pending.length === 0 && args.timeout > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, args.timeout * 1000);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
          signal.addEventListener('abort', wake, { once: true });
        });
      }
      if (signal.aborted) throw new Error('aborted');
      return pending.slice(0, args.limit);
    },
  };
}

describe('the update ledger', () => {
  it('confirms up to the oldest update still being handled, and drops repeats', () => {
    const ledger = updateLedger();
    expect(ledger.offset()).toBe(0);
    expect(ledger.accept([update(5), update(6)]).map((u) => u.update_id)).toEqual([5, 6]);
    expect(ledger.offset()).toBe(5);
    ledger.finish(6);
    expect(ledger.offset()).toBe(5);
    expect(ledger.accept([update(5), update(6), update(7)]).map((u) => u.update_id)).toEqual([7]);
    ledger.finish(5);
    expect(ledger.offset()).toBe(7);
    ledger.finish(7);
    expect(ledger.offset()).toBe(8);
    expect(ledger.busy()).toBe(false);
  });
});

describe('confirmed polling', () => {
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  it('confirms an update only after it is handled, and handles each update once', async () => {
    const telegram = fakeTelegram();
    const handled: number[] = [];
    let release = () => {};
    const polling = startPolling({
      log: silent,
      getUpdates: (a, s) => telegram.getUpdates(a, s),
      handle: async (u) => {
        handled.push(u.update_id);
        if (u.update_id === 1) await new Promise<void>((r) => (release = r));
      },
      timeoutSeconds: 30,
      idlePollMs: 5,
    });
    stops.push(() => polling.stop());
    telegram.push(update(1));
    await wait(() => handled.includes(1), 'update 1 to be handled');
    telegram.push(update(2));
    await wait(() => handled.includes(2), 'update 2 to be handled');
    await new Promise((r) => setTimeout(r, 100));
    // While 1 is being handled, nothing from 1 on is confirmed, and neither update comes twice.
    expect(telegram.calls.filter((c) => c.offset > 1)).toEqual([]);
    expect(telegram.pending()).toEqual([1, 2]);
    expect(handled).toEqual([1, 2]);
    release();
    // A long poll started before is interrupted, so the confirmation does not wait 30 s.
    await wait(() => telegram.calls.some((c) => c.offset === 3), 'the offset to pass both updates', 3000);
    expect(handled).toEqual([1, 2]);
    await polling.stop();
  });

  it('an update whose handling never finished comes again after a restart', async () => {
    const telegram = fakeTelegram();
    const first: number[] = [];
    const a = startPolling({
      log: silent,
      getUpdates: (args, s) => telegram.getUpdates(args, s),
      handle: async (u) => {
        first.push(u.update_id);
        await new Promise(() => {});
      },
      timeoutSeconds: 0,
      idlePollMs: 5,
      stopGraceMs: 50,
    });
    telegram.push(update(7));
    await wait(() => first.length === 1, 'the first process to take update 7');
    await a.stop();
    const second: number[] = [];
    const b = startPolling({
      log: silent,
      getUpdates: (args, s) => telegram.getUpdates(args, s),
      handle: async (u) => {
        second.push(u.update_id);
      },
      timeoutSeconds: 0,
      idlePollMs: 5,
    });
    stops.push(() => b.stop());
    await wait(() => second.includes(7), 'update 7 to come again');
    await b.stop();
    // Handled now, and confirmed when the second process stopped.
    expect(telegram.calls.at(-1)?.offset).toBe(8);
  });

  it('backs off after network failures and carries on', async () => {
    const telegram = fakeTelegram();
    const times: number[] = [];
    let failures = 3;
    const handled: number[] = [];
    const polling = startPolling({
      log: silent,
      getUpdates: async (args, s) => {
        times.push(Date.now());
        if (failures-- > 0)
          throw new HttpError('Network request for getUpdates failed!', new Error('ECONNRESET'));
        return telegram.getUpdates(args, s);
      },
      handle: async (u) => {
        handled.push(u.update_id);
      },
      timeoutSeconds: 0,
      idlePollMs: 5,
      backoff: { firstMs: 40, maxMs: 100 },
    });
    stops.push(() => polling.stop());
    telegram.push(update(3));
    await wait(() => handled.includes(3), 'the update after the failures');
    const gaps = times.slice(1, 4).map((t, i) => t - (times[i] as number));
    expect(gaps[0]).toBeGreaterThanOrEqual(35);
    expect(gaps[1]).toBeGreaterThanOrEqual(75);
    expect(gaps[2]).toBeGreaterThanOrEqual(95);
  });

  it('a 409 ends polling with one clear error instead of a retry loop', async () => {
    let calls = 0;
    const polling = startPolling({
      log: silent,
      getUpdates: async () => {
        calls++;
        throw new GrammyError(
          'Call failed',
          { ok: false, error_code: 409, description: 'Conflict: terminated by other getUpdates request' },
          'getUpdates',
          {},
        );
      },
      handle: async () => {},
      idlePollMs: 5,
    });
    await expect(polling.task).rejects.toBeInstanceOf(TelegramConflictError);
    expect(calls).toBe(1);
    await polling.stop();
  });
});

describe('the channel when another process polls the same token', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });

  it('run() rejects with the 409 as one line, after one getUpdates call', async () => {
    const methods: string[] = [];
    server = createServer((req, res) => {
      const method = req.url?.split('/').at(-1) ?? '';
      methods.push(method);
      res.setHeader('content-type', 'application/json');
      if (method === 'getUpdates') {
        res.statusCode = 409;
        res.end(
          JSON.stringify({
            ok: false,
            error_code: 409,
            description:
              'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
          }),
        );
      } else if (method === 'getMe') {
        res.end(
          JSON.stringify({
            ok: true,
            result: { id: 1, is_bot: true, first_name: 'steward', username: 'steward_bot' },
          }),
        );
      } else res.end(JSON.stringify({ ok: true, result: true }));
    });
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const assistant = { online: async () => {} } as unknown as ChannelPort;
    const channel = telegramChannel({
      token: '1:x',
      ownerId: 42,
      apiRoot: `http://127.0.0.1:${port}`,
      log: silent,
    });
    const error = await channel.run(assistant, new AbortController().signal).catch((e: Error) => e);
    expect(error).toBeInstanceOf(TelegramConflictError);
    expect((error as Error).message).toMatch(/another process is polling this bot token \(409 Conflict\)/);
    expect((error as Error).message).not.toContain('\n');
    expect(methods.filter((m) => m === 'getUpdates')).toHaveLength(1);
  });
});

describe('a streamed message', () => {
  // Fake clock: on a loaded machine real timers stretch the update loop, and with it the number of
  // edit slots it spans.
  afterEach(() => {
    vi.useRealTimers();
  });
  it('is sent once and then edited at most once per interval, ending on the newest text', async () => {
    vi.useFakeTimers();
    const events: Array<{ at: number; method: string; text: string }> = [];
    const api = {
      raw: {
        sendMessage: async (p: { text: string }) => {
          events.push({ at: Date.now(), method: 'send', text: p.text });
          return { message_id: 9 };
        },
        editMessageText: async (p: { text: string }) => {
          events.push({ at: Date.now(), method: 'edit', text: p.text });
          return true;
        },
      },
    } as unknown as Api;
    const out = telegramOut(api, silent, 100);
    const message = liveMessage(out, 1);
    let text = '';
    for (let i = 0; i < 30; i++) {
      text += `${i} `;
      message.update(text);
      await vi.advanceTimersByTimeAsync(10);
    }
    const settled = message.settle('final answer');
    await vi.runAllTimersAsync();
    await settled;
    expect(events.filter((e) => e.method === 'send')).toHaveLength(1);
    const edits = events.filter((e) => e.method === 'edit');
    expect(edits.length).toBeGreaterThan(0);
    expect(edits.length).toBeLessThanOrEqual(5);
    const all = events.map((e) => e.at);
    for (let i = 1; i < all.length; i++)
      expect((all[i] as number) - (all[i - 1] as number)).toBeGreaterThanOrEqual(95);
    expect(events.at(-1)?.text).toBe('final answer');
  });
});

describe('retrying failed calls', () => {
  const refused = () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    return new HttpError("Network request for 'sendMessage' failed!", cause);
  };
  const reset = () =>
    new HttpError(
      "Network request for 'sendMessage' failed!",
      Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    );
  const run = async (method: string, failures: Array<() => unknown>) => {
    let calls = 0;
    const prev = async () => {
      const fail = failures[calls++];
      if (fail) {
        const result = fail();
        if (result instanceof Error) throw result;
        return result;
      }
      return { ok: true, result: true };
    };
    const retry = transientRetry([1, 1, 1]) as unknown as (
      prev: () => Promise<unknown>,
      method: string,
      payload: unknown,
    ) => Promise<unknown>;
    const outcome = await retry(prev, method, {}).catch((e: Error) => e);
    return { calls, outcome };
  };

  it('sends again only when the connection was never made', async () => {
    expect(await run('sendMessage', [refused, refused])).toEqual({
      calls: 3,
      outcome: { ok: true, result: true },
    });
    const lost = await run('sendMessage', [reset]);
    expect(lost.calls).toBe(1);
    expect(lost.outcome).toBeInstanceOf(HttpError);
  });

  it('repeats edits after any network failure or 5xx, a few times at most', async () => {
    expect((await run('editMessageText', [reset, () => ({ ok: false, error_code: 502 })])).calls).toBe(3);
    expect((await run('editMessageText', [reset, reset, reset, reset, reset])).calls).toBe(4);
  });

  it('leaves getUpdates and 4xx answers alone', async () => {
    expect((await run('getUpdates', [reset])).calls).toBe(1);
    expect((await run('sendMessage', [() => ({ ok: false, error_code: 400 })])).calls).toBe(1);
  });
});
