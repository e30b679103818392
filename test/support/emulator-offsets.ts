// Telegram's getUpdates keeps an update until a later call passes an offset above its id, so an
// answer lost on the way back (a reset, a poll the bot gave up on) brings the same update again.
// telegram-test-api hands each update out once and forgets it, which turns such a fault into a lost
// message that real Telegram would never lose. This puts Telegram's rule in front of the package:
// getUpdates is answered here from the package's storage, by offset; every other call goes on.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TelegramServer } from 'telegram-test-api/lib/telegramServer.js';

type Handler = (req: IncomingMessage, res: ServerResponse, next?: unknown) => void;
interface StoredUpdate {
  botToken: string;
  updateId: number;
  isRead: boolean;
}
/** The package's private parts this relies on (version 4.x). */
interface Internals {
  webServer: { handle: Handler };
  storage: { userMessages: StoredUpdate[] };
}
const formatUpdate = (server: TelegramServer, update: StoredUpdate): unknown =>
  (server.constructor as unknown as { formatUpdate(u: StoredUpdate): unknown }).formatUpdate(update);

const PATH = /^\/bot([^/?]+)\/getUpdates(?:[/?]|$)/;

function argsOf(body: string, url: string, type: string | undefined): { offset?: number; limit?: number } {
  const query = new URL(url, 'http://x').searchParams;
  let fields: Record<string, unknown> = Object.fromEntries(query);
  if (body && /json/.test(type ?? ''))
    fields = { ...fields, ...(JSON.parse(body) as Record<string, unknown>) };
  else if (body) fields = { ...fields, ...Object.fromEntries(new URLSearchParams(body)) };
  const num = (v: unknown) => (v === undefined || v === '' ? undefined : Number(v));
  const offset = num(fields.offset);
  const limit = num(fields.limit);
  return { ...(offset !== undefined ? { offset } : {}), ...(limit !== undefined ? { limit } : {}) };
}

/** Makes `server` (not started yet) answer getUpdates by offset, as Telegram does. */
export function confirmByOffset(server: TelegramServer): void {
  const inner = server as unknown as Internals;
  const app = inner.webServer;
  const original = app.handle.bind(app);
  const confirmedBelow = new Map<string, number>();
  app.handle = (req, res, next) => {
    const match = PATH.exec(req.url ?? '');
    if (!match) return original(req, res, next);
    const token = decodeURIComponent(match[1] as string);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const args = argsOf(Buffer.concat(chunks).toString('utf8'), req.url ?? '', req.headers['content-type']);
      if (args.offset !== undefined && args.offset > 0)
        confirmedBelow.set(token, Math.max(confirmedBelow.get(token) ?? 0, args.offset));
      const from = confirmedBelow.get(token) ?? 0;
      const pending = inner.storage.userMessages
        .filter((u) => u.botToken === token && u.updateId >= from)
        .slice(0, args.limit && args.limit > 0 ? args.limit : 100);
      for (const u of pending) u.isRead = true;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, result: pending.map((u) => formatUpdate(server, u)) }));
    });
  };
}
