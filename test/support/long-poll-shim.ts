// A proxy in front of the Bot API emulator that behaves like the real Bot API where the emulator
// does not: an empty getUpdates is held for its `timeout` (the emulator answers at once, which
// hides what polling costs), and an update is handed out again on every poll until a later poll's
// `offset` confirms it (the emulator forgets an update once it has been fetched). Updates go out
// the moment the emulator has them. Every call and delivery is timestamped for the channel bench.
import type { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The emulator's events for a new user update (telegram-test-api's TelegramServer emits them). */
const UPDATE_EVENTS = ['AddedUserMessage', 'AddedUserCommand', 'AddedUserCallbackQuery'] as const;
/** Checked this often as well, in case an update arrives without an event. */
const RECHECK_MS = 250;

export interface ShimCall {
  method: string;
  payload: Record<string, unknown>;
  /** performance.now() when the request reached the shim. */
  at: number;
}

export interface ShimDelivery {
  updates: Array<{ update_id: number; message?: { text?: string } }>;
  /** performance.now() when the response carrying them was written. */
  at: number;
}

export interface LongPollShim {
  /** Use as the bot's API root instead of the emulator's. */
  apiRoot: string;
  /** Every call except getUpdates, in arrival order. */
  calls: ShimCall[];
  /** Every getUpdates answer that carried updates (an update appears again until confirmed). */
  deliveries: ShimDelivery[];
  /** performance.now() of each getUpdates request's arrival. */
  polls: number[];
  close(): Promise<void>;
}

export async function startLongPollShim(opts: {
  upstream: string;
  events: EventEmitter;
}): Promise<LongPollShim> {
  const calls: ShimCall[] = [];
  const deliveries: ShimDelivery[] = [];
  const polls: number[] = [];
  /** Fetched from the emulator and not yet confirmed by an offset past them, oldest first. */
  let unconfirmed: ShimDelivery['updates'] = [];
  const waiters = new Set<() => void>();
  let closed = false;
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  for (const event of UPDATE_EVENTS) opts.events.on(event, wake);

  const forward = async (path: string, body: string, contentType: string | undefined) => {
    const response = await fetch(`${opts.upstream}${path}`, {
      method: 'POST',
      headers: contentType ? { 'content-type': contentType } : {},
      body,
    });
    return { status: response.status, text: await response.text() };
  };

  const getUpdates = async (req: IncomingMessage, res: ServerResponse, path: string, body: string) => {
    polls.push(performance.now());
    const payload = parsePayload(body, req.headers['content-type']);
    const timeoutS = Number(payload.timeout ?? 0);
    const offset = Number(payload.offset ?? 0);
    const limit = Math.max(1, Math.min(100, Number(payload.limit ?? 100)));
    const deadline = performance.now() + timeoutS * 1000;
    unconfirmed = unconfirmed.filter((u) => u.update_id >= offset);
    let gone = false;
    res.on('close', () => {
      gone = true;
      wake();
    });
    for (;;) {
      const answer = await forward(path, body, req.headers['content-type']);
      const parsed = JSON.parse(answer.text) as { ok: boolean; result?: ShimDelivery['updates'] };
      unconfirmed.push(...(parsed.result ?? []));
      if (gone) return;
      const updates = unconfirmed.slice(0, limit);
      if (updates.length > 0 || !parsed.ok || closed || performance.now() >= deadline) {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ...parsed, result: updates }));
        if (updates.length > 0) deliveries.push({ updates, at: performance.now() });
        return;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          waiters.delete(done);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(done, Math.min(RECHECK_MS, Math.max(0, deadline - performance.now())));
        waiters.add(done);
      });
      if (gone) return;
    }
  };

  const server = createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      const path = req.url ?? '/';
      const method = path.split('/').pop() ?? '';
      if (method === 'getUpdates') {
        await getUpdates(req, res, path, body);
        return;
      }
      calls.push({ method, payload: parsePayload(body, req.headers['content-type']), at: performance.now() });
      const answer = await forward(path, body, req.headers['content-type']);
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.text);
    } catch (error) {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ ok: false, error_code: 502, description: `shim: ${(error as Error).message}` }),
      );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiRoot: `http://127.0.0.1:${port}`,
    calls,
    deliveries,
    polls,
    close: () =>
      new Promise((resolve) => {
        for (const event of UPDATE_EVENTS) opts.events.off(event, wake);
        closed = true;
        wake();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function parsePayload(body: string, contentType: string | undefined): Record<string, unknown> {
  if (body === '') return {};
  if (contentType?.includes('application/json')) return JSON.parse(body) as Record<string, unknown>;
  return Object.fromEntries(new URLSearchParams(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      data += c;
    });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}
