// The sync loop, ours rather than MatrixClient.start(): the long poll is aborted at once on stop,
// and the token is saved only after a batch has been taken in, so a restart neither answers an
// event twice nor misses one. A batch whose handling throws is fetched again with the same token.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../src/log.ts';
import { rateLimitWait } from './rate-limit.ts';

export interface SyncBatch {
  next_batch: string;
  rooms?: {
    join?: Record<string, { timeline?: { events?: MatrixEvent[]; limited?: boolean; prev_batch?: string } }>;
    invite?: Record<string, unknown>;
    leave?: Record<string, unknown>;
  };
  [key: string]: unknown;
}

export interface MatrixEvent {
  event_id: string;
  type: string;
  sender: string;
  content: Record<string, unknown>;
  state_key?: string;
  [key: string]: unknown;
}

export interface SyncOptions {
  homeserver: string;
  accessToken: string;
  storage: { getSyncToken(): Promise<string | null>; setSyncToken(token: string): Promise<unknown> };
  /**
   * Takes in one batch. `initial`: there was no token yet, so its timelines are history. `taken`
   * settles once every event is safely taken (a message in the assistant's log can wait for a turn
   * running in its room); the batch's token is saved only then, and rejecting means fetch again.
   */
  handle(batch: SyncBatch, initial: boolean): Promise<{ taken: Promise<void> } | undefined>;
  signal: AbortSignal;
  log: Logger;
  pollMs?: number;
}

export class MatrixAuthError extends Error {
  override name = 'MatrixAuthError';
}

/** An error that trying the batch again cannot cure (it says `fatal`): the loop ends with it. */
function isFatal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { fatal?: unknown }).fatal === true;
}

const FILTER = JSON.stringify({
  presence: { types: [] },
  room: { timeline: { limit: 50 }, state: { lazy_load_members: true } },
});
/**
 * The first sync (no token) only finds where "now" is; its timeline is history. Synapse caches a
 * sync response for identical requests (2 minutes by default), and an earlier first sync's stale
 * position would make history look new, so this filter carries a nonce no other request has.
 */
const FIRST_FILTER = () =>
  JSON.stringify({
    presence: { types: [] },
    room: {
      timeline: { limit: 1, not_types: [`steward.nonce.${randomUUID()}`] },
      state: { lazy_load_members: true },
    },
  });
/** A timeline cut short ("limited") is filled from /messages, back to the last token, this far. */
const MAX_BACKFILL = 500;

/**
 * Runs until `signal` aborts. Rejects only when the access token is refused or on a fatal error.
 * Syncing goes on while earlier batches' events wait to be taken; tokens are saved in order, each
 * once its batch and every one before it is taken. A batch whose events could not be taken makes
 * the loop fetch again from the token it was fetched with; what was taken meanwhile is skipped as
 * seen, and what is still being taken is waited for.
 */
export async function runSync(options: SyncOptions): Promise<void> {
  const { signal, log } = options;
  let token = await options.storage.getSyncToken();
  let failures = 0;
  let saving: Promise<void> = Promise.resolve();
  // Set when a batch could not be taken: the token it was fetched with, the newest one saved
  // before it in its round (tokens are saved in order), so nothing is read from the store.
  let refetchFrom: { since: string | null } | undefined;
  let generation = 0;
  while (!signal.aborted) {
    try {
      if (refetchFrom) {
        token = refetchFrom.since;
        refetchFrom = undefined;
        saving = Promise.resolve();
      }
      // A batch belongs to the round its fetch began in: one fetched as a failure was being found
      // must not be saved past it either.
      const mine = generation;
      const since = token;
      const polled = performance.now();
      const batch = await syncOnce(options, token);
      const got = performance.now();
      if (token) await fillGaps(options, batch, token);
      const handed = await options.handle(batch, token === null);
      const next = batch.next_batch;
      saving = saving.then(async () => {
        try {
          await handed?.taken;
          if (mine === generation) await options.storage.setSyncToken(next);
        } catch (error) {
          // No later token may be saved past it: everything from the last saved one comes again.
          if (mine !== generation || signal.aborted) return;
          generation++;
          refetchFrom = { since };
          log.warn(
            `matrix: could not take in every event (${(error as Error).message}); fetching them again`,
          );
        }
      });
      log.debug(
        {
          rooms: Object.keys(batch.rooms?.join ?? {}).length,
          pollMs: Math.round(got - polled),
          takeInMs: Math.round(performance.now() - got),
        },
        'matrix: took in a sync batch',
      );
      token = next;
      failures = 0;
    } catch (error) {
      if (signal.aborted) break;
      if (error instanceof MatrixAuthError || isFatal(error)) throw error;
      failures++;
      const wait = rateLimitWait(error) ?? Math.min(30_000, 1000 * 2 ** Math.min(failures, 5));
      log.warn(
        `matrix sync failed (${(error as Error).message}); trying again in ${Math.round(wait / 1000)} s`,
      );
      await pause(wait, signal);
    }
  }
}

async function syncOnce(options: SyncOptions, since: string | null): Promise<SyncBatch> {
  const pollMs = options.pollMs ?? 30_000;
  const query = new URLSearchParams({
    timeout: String(since ? pollMs : 0),
    filter: since ? FILTER : FIRST_FILTER(),
  });
  if (since) query.set('since', since);
  return (await getJson(options, `/_matrix/client/v3/sync?${query}`, pollMs + 30_000)) as SyncBatch;
}

async function getJson(options: SyncOptions, path: string, timeoutMs: number): Promise<unknown> {
  const response = await fetch(`${options.homeserver}${path}`, {
    headers: { authorization: `Bearer ${options.accessToken}` },
    signal: AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)]),
  });
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (response.status === 401) {
    throw new MatrixAuthError(
      `the homeserver refused STEWARD_MATRIX_ACCESS_TOKEN (${String(body.errcode ?? 401)}); log the bot in again for a new token`,
    );
  }
  if (!response.ok) {
    throw Object.assign(new Error(`HTTP ${response.status} ${String(body.errcode ?? '')}`.trim()), {
      statusCode: response.status,
      body,
    });
  }
  return body;
}

/** Puts the events a limited timeline left out back in front of it, oldest first. */
async function fillGaps(options: SyncOptions, batch: SyncBatch, since: string): Promise<void> {
  for (const [roomId, room] of Object.entries(batch.rooms?.join ?? {})) {
    const timeline = room.timeline;
    if (!timeline?.limited || !timeline.prev_batch) continue;
    const older: MatrixEvent[] = [];
    let from: string | undefined = timeline.prev_batch;
    while (from && older.length < MAX_BACKFILL) {
      const query = new URLSearchParams({ dir: 'b', from, to: since, limit: '100' });
      const page = (await getJson(
        options,
        `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/messages?${query}`,
        30_000,
      )) as { chunk?: MatrixEvent[]; end?: string };
      older.push(...(page.chunk ?? []));
      from = page.chunk?.length ? page.end : undefined;
    }
    if (older.length >= MAX_BACKFILL)
      options.log.warn({ roomId }, 'matrix: more events missed than fetched back');
    timeline.events = [...older.reverse(), ...(timeline.events ?? [])];
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
