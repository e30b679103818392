// Long polling with @grammyjs/runner, confirming an update only once it has been handled.
//
// Telegram forgets an update when a later getUpdates call passes an offset above its id. The
// runner's own fetcher moves the offset as soon as a batch arrives, so a crash would lose updates
// that were fetched but not yet handled. This supplier passes, as offset, the id of the oldest
// update still being handled: everything before it is done (its message is in the session log and
// the turn answered or parked), everything from it on comes again after a crash. Updates that come
// again while still being handled are dropped here, and a long poll started with an older offset
// is interrupted when an update finishes, so the confirmation is not left waiting for 30 seconds.

import { createConcurrentSink, createRunner, createSource, type UpdateSupplier } from '@grammyjs/runner';
import type { Update } from 'grammy/types';
import type { Logger } from '../../src/log.ts';
import { fatalTelegramError } from './errors.ts';
import { DEFAULT_UPDATE_RETRY, handleWithRetry, type RetryPolicy } from './update-retry.ts';

export const ALLOWED_UPDATES = ['message', 'callback_query'] as const;
/** A long poll older than this is interrupted when an update finishes, so the offset moves on. */
const INTERRUPT_AFTER_MS = 1000;

export interface GetUpdatesArgs {
  offset: number;
  limit: number;
  timeout: number;
  allowed_updates: Array<(typeof ALLOWED_UPDATES)[number]>;
}

export interface PollingDeps {
  getUpdates(args: GetUpdatesArgs, signal: AbortSignal): Promise<Update[]>;
  /** Runs before the first poll, and again after a failure until it succeeds (getMe). */
  init?(signal: AbortSignal): Promise<void>;
  /** Resolves once the update is handled; only then is it confirmed. */
  handle(update: Update): Promise<void>;
  /** A failed update is tried again this often before it is given up. */
  retry?: RetryPolicy;
  /** Told when an update is given up (and so confirmed): say so to the owner. */
  dropped?(update: Update, tries: number, error: Error): Promise<void>;
  log: Logger;
  timeoutSeconds?: number;
  /** Polls that bring nothing new are at least this far apart (matters only for servers that answer at once). */
  idlePollMs?: number;
  /** After a failed poll: the first wait, doubled each time up to the maximum. */
  backoff?: { firstMs: number; maxMs: number };
  /** How long `stop` waits for updates still being handled, so they can be confirmed. */
  stopGraceMs?: number;
  concurrency?: number;
}

export interface Polling {
  /** Settles when polling ends; rejects with the error that ended it (a TelegramChannelError). */
  readonly task: Promise<void>;
  stop(): Promise<void>;
}

/** The updates being handled, and the offset that confirms exactly the ones before them. */
export function updateLedger() {
  let highest = -1;
  let abandoned = Number.POSITIVE_INFINITY;
  const handling = new Set<number>();
  let waiters: Array<() => void> = [];
  return {
    /** The updates not seen before; they count as being handled from now. */
    accept(updates: readonly Update[]): Update[] {
      const fresh = updates.filter((u) => u.update_id > highest);
      for (const u of fresh) {
        handling.add(u.update_id);
        highest = Math.max(highest, u.update_id);
      }
      return fresh;
    },
    /** Still unhandled at a stop: it keeps holding the offset, so it is never confirmed. */
    abandon(id: number): void {
      const wake = waiters;
      waiters = [];
      for (const w of wake) w();
      abandoned = Math.min(abandoned, id);
      handling.delete(id);
    },
    finish(id: number): void {
      handling.delete(id);
      const wake = waiters;
      waiters = [];
      for (const w of wake) w();
    },
    offset: () => Math.min(abandoned, handling.size > 0 ? Math.min(...handling) : highest + 1),
    busy: () => handling.size > 0,
    /** Resolves at the next `finish`. */
    changed: () => new Promise<void>((resolve) => waiters.push(resolve)),
  };
}

/** What both the standard AbortSignal and the runner's polyfilled one offer. */
interface Abortable {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

const sleep = (ms: number, signal?: Abortable) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

export function startPolling(deps: PollingDeps): Polling {
  const { log } = deps;
  const timeout = deps.timeoutSeconds ?? 30;
  const idlePollMs = deps.idlePollMs ?? 500;
  const backoff = deps.backoff ?? { firstMs: 1000, maxMs: 30_000 };
  const ledger = updateLedger();
  let initialized = false;
  let failures = 0;
  let confirmed = 0;
  /** The poll in flight; a long poll is interrupted when an update finishes, to confirm it soon. */
  let inFlight: { controller: AbortController; started: number } | undefined;
  let confirmTimer: NodeJS.Timeout | undefined;
  const pollEnded = () => {
    inFlight = undefined;
    clearTimeout(confirmTimer);
    confirmTimer = undefined;
  };

  const finish = (id: number) => {
    const before = ledger.offset();
    ledger.finish(id);
    const poll = inFlight;
    if (ledger.offset() <= before || !poll || confirmTimer) return;
    // Only a poll that has waited a while is interrupted: one that is answering right now may
    // carry updates, and although Telegram sends unconfirmed updates again, not every server does.
    confirmTimer = setTimeout(
      () => {
        confirmTimer = undefined;
        if (inFlight === poll) poll.controller.abort();
      },
      Math.max(0, poll.started + INTERRUPT_AFTER_MS - Date.now()),
    );
  };

  const supplier: UpdateSupplier<Update> = {
    async supply(batchSize, signal) {
      for (;;) {
        if (signal.aborted) throw new Error('polling stopped');
        const poll = new AbortController();
        const abort = () => poll.abort();
        signal.addEventListener('abort', abort, { once: true });
        const started = Date.now();
        try {
          if (!initialized) {
            await deps.init?.(poll.signal);
            initialized = true;
          }
          const offset = ledger.offset();
          inFlight = { controller: poll, started: Date.now() };
          const updates = await deps.getUpdates(
            {
              offset,
              limit: Math.max(1, Math.min(100, batchSize)),
              timeout,
              allowed_updates: [...ALLOWED_UPDATES],
            },
            poll.signal,
          );
          pollEnded();
          confirmed = Math.max(confirmed, offset);
          if (failures > 0) log.info(`telegram: polling works again after ${failures} failed attempts`);
          failures = 0;
          const fresh = ledger.accept(updates);
          if (fresh.length > 0) return fresh;
          // Nothing new (the poll timed out, or brought back updates still being handled).
          const wait = started + idlePollMs - Date.now();
          if (wait > 0) await Promise.race([sleep(wait, signal), ledger.changed()]);
        } catch (error) {
          pollEnded();
          if (signal.aborted) throw error;
          if (poll.signal.aborted) continue;
          const fatal = fatalTelegramError(error);
          if (fatal) throw fatal;
          failures++;
          const delay = Math.min(backoff.maxMs, backoff.firstMs * 2 ** Math.min(failures - 1, 20));
          if (failures === 1 || failures % 10 === 0) {
            log.warn(
              { failures },
              `telegram: polling failed (${(error as Error).message}); trying again in ${Math.round(delay / 1000)} s`,
            );
          }
          await sleep(delay, signal);
        } finally {
          signal.removeEventListener('abort', abort);
        }
      }
    },
  };

  const retry = deps.retry ?? DEFAULT_UPDATE_RETRY;
  const stopSignal = new AbortController();
  const consume = async (update: Update) => {
    const outcome = await handleWithRetry(
      () => deps.handle(update),
      retry,
      () => stopSignal.signal.aborted,
      (ms) => sleep(ms, stopSignal.signal),
    );
    switch (outcome.kind) {
      case 'handled':
        finish(update.update_id);
        return;
      case 'stopped':
        // Not confirmed: the offset stays below it, so Telegram delivers it again.
        ledger.abandon(update.update_id);
        return;
      case 'dropped':
        log.error(
          `telegram: gave up on update ${update.update_id} after ${retry.tries} tries: ${outcome.error.message}`,
        );
        await deps.dropped?.(update, retry.tries, outcome.error).catch((error: Error) => {
          log.warn(`telegram: could not tell the owner about a dropped update: ${error.message}`);
        });
        finish(update.update_id);
        return;
    }
  };
  const sink = createConcurrentSink<Update>(
    { consume },
    async (error) => {
      log.error(`telegram: an update could not be handled: ${(error as Error)?.message ?? String(error)}`);
    },
    { concurrency: deps.concurrency ?? 100 },
  );
  const runner = createRunner(createSource(supplier), sink);
  runner.start();
  const task = runner.task() ?? Promise.resolve();
  let stopping: Promise<void> | undefined;

  return {
    task,
    stop() {
      stopping ??= (async () => {
        stopSignal.abort();
        await runner.stop()?.catch(() => {});
        // Updates still being handled get a moment to finish, so they are confirmed below.
        const deadline = Date.now() + (deps.stopGraceMs ?? 10_000);
        while (ledger.busy() && Date.now() < deadline) {
          await Promise.race([ledger.changed(), sleep(deadline - Date.now())]);
        }
        const offset = ledger.offset();
        if (offset <= confirmed) return;
        try {
          await deps.getUpdates(
            { offset, limit: 1, timeout: 0, allowed_updates: [...ALLOWED_UPDATES] },
            AbortSignal.timeout(5000),
          );
        } catch (error) {
          log.warn(
            `telegram: could not confirm the last updates (${(error as Error).message}); they may come again`,
          );
        }
      })();
      return stopping;
    },
  };
}
