// Webhook mode: Telegram POSTs each update to this server. An update is answered 200 only once it
// is safe: a message once the core has it in the event log (or needs none), a button press once
// the decision is recorded, it is done, or a short bound has passed. A failure before that is
// answered 500, so Telegram delivers the update again; the core skips a message id it already has.
// The turn itself runs on after the answer; `stop` waits for the turns still running.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Update } from 'grammy/types';
import type { Logger } from '../../src/log.ts';
import { TelegramChannelError } from './errors.ts';
import type { UpdateHandler } from './update-router.ts';

export const SECRET_HEADER = 'x-telegram-bot-api-secret-token';

export interface WebhookServerOptions {
  host: string;
  /** 0 picks a free port (tests); `address` tells which. */
  port: number;
  path: string;
  secret: string;
  handle: UpdateHandler;
  log: Logger;
  /** A button press is answered 200 after this long even if its decision is still being made. */
  callbackBoundMs?: number;
  maxBodyBytes?: number;
}

export interface WebhookServer {
  readonly address: AddressInfo;
  /** Stops listening, then waits up to `graceMs` for updates still being handled. */
  stop(graceMs: number): Promise<void>;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Constant-time comparison of the header Telegram sends with the configured secret. */
export function secretMatches(given: string | string[] | undefined, secret: string): boolean {
  return typeof given === 'string' && timingSafeEqual(digest(given), digest(secret));
}

function reply(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(`${status}\n`);
}

/** The request body, or undefined once it grows past `max` bytes. */
async function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function asUpdate(body: string): Update | undefined {
  try {
    const value = JSON.parse(body) as Update;
    return typeof value === 'object' && value !== null && Number.isInteger(value.update_id)
      ? value
      : undefined;
  } catch {
    return undefined;
  }
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const { log, secret } = options;
  const bound = options.callbackBoundMs ?? 2000;
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  /** Updates being handled, by id: a copy that comes meanwhile gets the same answer. */
  const inFlight = new Map<number, Promise<boolean>>();
  const tasks = new Set<Promise<void>>();
  let stopping: Promise<void> | undefined;

  /** Resolves true once the update may be confirmed, false when it failed before that. */
  const admit = (update: Update): Promise<boolean> => {
    const known = inFlight.get(update.update_id);
    if (known) return known;
    let settle: (ok: boolean) => void = () => {};
    const outcome = new Promise<boolean>((resolve) => {
      settle = resolve;
    });
    inFlight.set(update.update_id, outcome);
    let accepted = false;
    const accept = () => {
      accepted = true;
      settle(true);
    };
    const timer = update.callback_query ? setTimeout(accept, bound) : undefined;
    const task = options
      .handle(update, { accepted: accept })
      .then(accept, (error: unknown) => {
        const message = (error as Error)?.message ?? String(error);
        if (accepted) {
          log.error(`telegram: an update could not be handled: ${message}`);
        } else {
          log.error(
            `telegram: update ${update.update_id} failed (${message}); answered 500 so Telegram sends it again`,
          );
        }
        settle(false);
      })
      .finally(() => {
        clearTimeout(timer);
        inFlight.delete(update.update_id);
        tasks.delete(task);
      });
    tasks.add(task);
    return outcome;
  };

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== options.path) return reply(res, 404);
    if (req.method !== 'POST') return reply(res, 405, { allow: 'POST' });
    if (!secretMatches(req.headers[SECRET_HEADER], secret)) {
      log.warn('telegram: a webhook request without the right secret token was refused (401)');
      return reply(res, 401);
    }
    if (stopping) return reply(res, 503, { connection: 'close' });
    const body = await readBody(req, maxBody);
    if (body === undefined) return reply(res, 413, { connection: 'close' });
    const update = asUpdate(body);
    if (!update) return reply(res, 400);
    reply(res, (await admit(update)) ? 200 : 500);
  };

  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      log.warn(`telegram: a webhook request failed: ${(error as Error)?.message ?? String(error)}`);
      if (!res.headersSent) reply(res, 500);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new TelegramChannelError(
          `telegram: cannot listen for the webhook on ${options.host}:${options.port} (${error.code ?? error.message}); free the port or change telegram.webhook.listen_host / listen_port`,
        ),
      );
    });
    server.listen(options.port, options.host, () => resolve());
  });
  server.on('error', (error) => log.warn(`telegram: webhook server: ${error.message}`));

  return {
    address: server.address() as AddressInfo,
    stop(graceMs) {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const deadline = Date.now() + graceMs;
        while (tasks.size > 0 && Date.now() < deadline) {
          await Promise.race([Promise.allSettled([...tasks]), pause(deadline - Date.now())]);
        }
        if (tasks.size > 0) log.warn(`telegram: stopped with ${tasks.size} updates still being handled`);
        server.closeAllConnections();
        await closed;
      })();
      return stopping;
    },
  };
}
