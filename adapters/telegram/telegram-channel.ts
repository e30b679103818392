// The Telegram channel: the owner's private chat with the bot is the owner's room. Long polling
// through @grammyjs/runner (an update is confirmed once handled), or, by config, a webhook (an
// update is answered 200 once it is in the event log); 429s waited out, network failures backed
// off, and a 409 (another poller on the token) or a rejected token ends `run` with one clear error.
import type { AddressInfo } from 'node:net';
import { autoRetry } from '@grammyjs/auto-retry';
import { Bot, type Transformer } from 'grammy';
import type { Channel, ChannelPort, ReplySink } from '../../src/channel/port.ts';
import type { Logger } from '../../src/log.ts';
import { ALLOWED_UPDATES, type PollingDeps, startPolling } from './confirmed-polling.ts';
import { fatalTelegramError } from './errors.ts';
import { escapeHtml } from './html.ts';
import { telegramFileUrl } from './inbound-files.ts';
import { commandsPayload } from './payloads.ts';
import { promptRegistry } from './prompt-registry.ts';
import { strangerLog } from './stranger-log.ts';
import { describeApiError, telegramOut } from './telegram-out.ts';
import { transientRetry } from './transient-retry.ts';
import { type TurnView, turnView } from './turn-view.ts';
import { droppedNotice } from './update-retry.ts';
import { TELEGRAM_CHANNEL, updateRouter } from './update-router.ts';
import type { WebhookServer } from './webhook-server.ts';

export { TelegramChannelError } from './errors.ts';
export { TELEGRAM_CHANNEL };

type GrammySignal = Parameters<Bot['init']>[0];

export interface TelegramChannelOptions {
  token: string;
  /** The owner's numeric user id; their private chat with the bot is the only room. */
  ownerId: number | string;
  apiRoot?: string;
  log: Logger;
  /** Applied to every API call, innermost (tests record the calls with one). */
  transformers?: Transformer[];
  /** Edits of one chat are at least this far apart (Telegram tolerates about one a second). */
  editIntervalMs?: number;
  typingEveryMs?: number;
  polling?: Pick<PollingDeps, 'timeoutSeconds' | 'idlePollMs' | 'backoff' | 'stopGraceMs' | 'retry'>;
  /** Webhook mode instead of polling: Telegram POSTs updates to `url`, served on host:port/path. */
  webhook?: TelegramWebhookOptions;
}

export interface TelegramWebhookOptions {
  /** The public https URL Telegram calls (a reverse proxy forwards it to host:port/path). */
  url: string;
  host: string;
  /** 0 picks a free port; `webhookAddress()` tells which. */
  port: number;
  path: string;
  /** Sent by Telegram in X-Telegram-Bot-Api-Secret-Token; other requests get 401. */
  secret: string;
  callbackBoundMs?: number;
  stopGraceMs?: number;
  /** After a failed setWebhook: the first wait, doubled each time up to the maximum. */
  backoff?: { firstMs: number; maxMs: number };
}

export interface TelegramChannel extends Channel {
  /** Where the webhook server listens, once it does (webhook mode only). */
  webhookAddress(): AddressInfo | undefined;
}

export function telegramChannel(options: TelegramChannelOptions): TelegramChannel {
  const { log } = options;
  const bot = new Bot(options.token, options.apiRoot ? { client: { apiRoot: options.apiRoot } } : {});
  // Innermost first: the caller's transformers see each attempt as it goes on the wire.
  for (const transformer of options.transformers ?? []) bot.api.config.use(transformer);
  bot.api.config.use(transientRetry());
  bot.api.config.use(
    autoRetry({
      maxRetryAttempts: 5,
      maxDelaySeconds: 300,
      rethrowHttpErrors: true,
      rethrowInternalServerErrors: true,
    }),
  );
  const ownerId = String(options.ownerId);
  const fileRoot = (options.apiRoot ?? 'https://api.telegram.org').replace(/\/+$/, '');
  const ownerChat = Number(ownerId);
  const out = telegramOut(bot.api, log, options.editIntervalMs);
  const prompts = promptRegistry();

  // Posts without an inbound message (resumed turns, timeouts, digests): one view per turn.
  let current: TurnView | undefined;
  const ownerSink: ReplySink = async (event) => {
    // Each turn the core starts (or resumes) gets a view of its own.
    if (!current || event.type === 'turn_started')
      current = turnView({ out, chatId: ownerChat, ownerId, prompts });
    return current.sink(event);
  };
  const outbox = (room: string): ReplySink | undefined => (room === ownerId ? ownerSink : undefined);
  const registerCommands = () => {
    // The command menu is a nicety: a server that cannot set it changes nothing else.
    void bot.api.raw.setMyCommands(commandsPayload()).catch((error) => {
      log.warn(`telegram: could not register the command menu: ${describeApiError(error)}`);
    });
  };
  let webhookServer: WebhookServer | undefined;

  return {
    name: TELEGRAM_CHANNEL,
    outbox,
    ownerRoom: () => ownerId,
    health: () => (options.webhook ? `webhook ${options.webhook.url}` : 'long polling'),
    webhookAddress: () => webhookServer?.address,

    async run(assistant: ChannelPort, signal: AbortSignal) {
      // getMe goes out while the core resumes cut-off turns. The init before the first poll (or
      // setWebhook) waits for this same call, and asks again, with its backoff, if it failed.
      bot.init(signal as GrammySignal).catch(() => {});
      await assistant.online(TELEGRAM_CHANNEL);

      const handle = updateRouter({
        assistant,
        out,
        ownerId,
        prompts,
        strangers: strangerLog(log),
        files: {
          getFile: (fileId) => bot.api.getFile(fileId),
          url: (path) => telegramFileUrl(fileRoot, options.token, path),
        },
        ...(options.typingEveryMs ? { typingEveryMs: options.typingEveryMs } : {}),
      });
      const stopped = new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      });

      const hook = options.webhook;
      if (hook) {
        try {
          // Loaded only for a webhook: importing node:http as a module loads Node's own undici
          // (its WebSocket getters), about 40 ms of a start that polls.
          const { startWebhookServer } = await import('./webhook-server.ts');
          webhookServer = await startWebhookServer({ ...hook, handle, log });
          const { address, port } = webhookServer.address;
          log.info(`telegram: webhook server listening on ${address}:${port}${hook.path}`);
          const registered = setWebhookUntilDone(bot, hook, log, signal).then(() => {
            if (signal.aborted) return;
            log.info(`telegram: webhook set as @${bot.botInfo.username}; only user ${ownerId} is heard`);
            registerCommands();
          });
          await Promise.race([registered.then(() => stopped), stopped]);
        } finally {
          // The webhook stays set, so updates sent while steward is down come once it is back.
          await webhookServer?.stop(hook.stopGraceMs ?? 10_000);
          await current?.finish();
        }
        return;
      }

      const polling = startPolling({
        ...options.polling,
        log,
        init: async (initSignal) => {
          await bot.init(initSignal as GrammySignal);
          log.info(`telegram: polling as @${bot.botInfo.username}; only user ${ownerId} is heard`);
          registerCommands();
        },
        // grammY types its signals with an AbortController polyfill; the standard one works the same.
        getUpdates: (args, pollSignal) => bot.api.getUpdates(args, pollSignal as GrammySignal),
        handle,
        dropped: async (update, tries, error) => {
          await out.send(ownerChat, escapeHtml(droppedNotice(update, tries, error)));
        },
      });
      try {
        await Promise.race([polling.task, stopped]);
      } finally {
        await polling.stop();
        await current?.finish();
      }
    },
  };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/** getMe and setWebhook, retried with backoff; a rejected token ends `run`. */
async function setWebhookUntilDone(
  bot: Bot,
  hook: TelegramWebhookOptions,
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  const backoff = hook.backoff ?? { firstMs: 1000, maxMs: 30_000 };
  for (let failures = 0; !signal.aborted; ) {
    try {
      await bot.init(signal as GrammySignal);
      await bot.api.setWebhook(
        hook.url,
        { secret_token: hook.secret, allowed_updates: [...ALLOWED_UPDATES] },
        signal as GrammySignal,
      );
      return;
    } catch (error) {
      if (signal.aborted) return;
      const fatal = fatalTelegramError(error);
      if (fatal) throw fatal;
      failures++;
      const delay = Math.min(backoff.maxMs, backoff.firstMs * 2 ** Math.min(failures - 1, 20));
      if (failures === 1 || failures % 10 === 0) {
        log.warn(
          { failures },
          `telegram: could not set the webhook (${describeApiError(error)}); trying again in ${Math.round(delay / 1000)} s`,
        );
      }
      await sleep(delay, signal);
    }
  }
}
