// The sync loop confirms (saves) a batch's token only once its events are taken, in order, against
// a homeserver stub on a real socket. A kill used to lose a message that had arrived and been
// handed on but was not yet in the assistant's log: the token moved past it, and the seen-set
// said it was done (found by the fault suite's Matrix kills).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runSync, type SyncBatch } from '../adapters/matrix/sync-loop.ts';
import { createLogger } from '../src/log.ts';

const waitFor = async (what: string, ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!ok()) throw new Error(`timed out waiting for ${what}`);
};

describe('Matrix sync tokens are saved once their events are taken', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  /** Answers /sync with token `since+1`, one message each; long-polls once `batches` ran out. */
  async function homeserver(batches: number) {
    const asked: Array<string | null> = [];
    const hs = createServer((req, res) => {
      const since = new URL(req.url ?? '', 'http://x').searchParams.get('since');
      asked.push(since);
      const n = Number(since ?? 0);
      if (n >= batches) return setTimeout(() => res.end(JSON.stringify({ next_batch: String(n) })), 200);
      const body: SyncBatch = {
        next_batch: String(n + 1),
        rooms: {
          join: {
            '!r': {
              timeline: {
                events: [{ event_id: `$e${n + 1}`, type: 'm.room.message', sender: '@o', content: {} }],
              },
            },
          },
        },
      };
      res.end(JSON.stringify(body));
    });
    server = hs;
    await new Promise<void>((done) => hs.listen(0, '127.0.0.1', done));
    return { url: `http://127.0.0.1:${(hs.address() as AddressInfo).port}`, asked };
  }

  it('keeps the older token while an earlier batch waits, even if a later one was taken', async () => {
    const hs = await homeserver(3);
    let saved: string | null = '0';
    const pending = new Map<string, PromiseWithResolvers<void>>();
    const stop = new AbortController();
    const running = runSync({
      homeserver: hs.url,
      accessToken: 't',
      storage: {
        getSyncToken: async () => saved,
        setSyncToken: async (t) => {
          saved = t;
        },
      },
      handle: async (batch) => {
        const waiting = Promise.withResolvers<void>();
        pending.set(batch.next_batch, waiting);
        if (batch.next_batch !== '1') waiting.resolve(); // batches 2 and 3 are taken at once
        return { taken: waiting.promise };
      },
      signal: stop.signal,
      log: createLogger('silent', []),
      pollMs: 100,
    });
    await waitFor('three batches', () => pending.size >= 3);
    await new Promise((r) => setTimeout(r, 50));
    expect(saved).toBe('0'); // batch 1 is not taken yet: nothing after it is confirmed either
    pending.get('1')?.resolve();
    await waitFor('the newest token', () => saved === '3');
    stop.abort();
    await running;
  });

  it('fetches again from the refused batch’s own token, saving nothing past it', async () => {
    const hs = await homeserver(3);
    let saved: string | null = '0';
    const savedAll: string[] = [];
    let refused = false;
    let reads = 0;
    const stop = new AbortController();
    const running = runSync({
      homeserver: hs.url,
      accessToken: 't',
      storage: {
        // Read once at start; a re-fetch must not depend on reading it again (the database that
        // refused the event may refuse this too).
        getSyncToken: async () => {
          if (reads++ > 0) throw new Error('database unreachable');
          return saved;
        },
        setSyncToken: async (t) => {
          saved = t;
          savedAll.push(t);
        },
      },
      handle: async (batch) => {
        // The first delivery of batch 2 cannot be taken (the database was away); later ones can.
        if (batch.next_batch === '2' && !refused) {
          refused = true;
          return { taken: Promise.reject(new Error('database unreachable')) };
        }
        return { taken: Promise.resolve() };
      },
      signal: stop.signal,
      log: createLogger('silent', []),
      pollMs: 100,
    });
    await waitFor('the newest token after the retry', () => saved === '3' && refused);
    stop.abort();
    await running;
    // Asked again from "1", the last token saved before the refused batch.
    expect(hs.asked.filter((s) => s === '1').length).toBeGreaterThanOrEqual(2);
    expect(savedAll.indexOf('2')).toBeGreaterThan(-1);
    expect(savedAll.slice(0, savedAll.indexOf('2'))).not.toContain('3');
  });
});
