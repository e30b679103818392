// The Telegram channel: the owner's private chat with the bot is the owner's room. Long polling
// through @grammyjs/runner (an update is confirmed once handled), 429s waited out, network
// failures backed off, and a 409 (another poller on the token) ends `run` with one clear error.
import { autoRetry } from '@grammyjs/auto-retry';
import { Bot, type Transformer } from 'grammy';
import type { Channel, ReplySink } from '../../src/channel/port.ts';
import type { Assistant } from '../../src/core/assistant.ts';
import type { Logger } from '../../src/log.ts';
import { type PollingDeps, startPolling } from './confirmed-polling.ts';
import { commandsPayload } from './payloads.ts';
import { promptRegistry } from './prompt-registry.ts';
import { strangerLog } from './stranger-log.ts';
import { describeApiError, telegramOut } from './telegram-out.ts';
import { transientRetry } from './transient-retry.ts';
import { type TurnView, turnView } from './turn-view.ts';
import { TELEGRAM_CHANNEL, updateRouter } from './update-router.ts';

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
  /** How often unanswered questions are checked for their deadline. */
  sweepEveryMs?: number;
  polling?: Pick<PollingDeps, 'timeoutSeconds' | 'idlePollMs' | 'backoff' | 'stopGraceMs'>;
}

export function telegramChannel(options: TelegramChannelOptions): Channel {
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
  const ownerChat = Number(ownerId);
  const out = telegramOut(bot.api, log, options.editIntervalMs);
  const prompts = promptRegistry();

  // Posts without an inbound message (resumed turns, timeouts, digests): one view per turn.
  let current: TurnView | undefined;
  const ownerSink: ReplySink = async (event) => {
    if (!current || current.replied) current = turnView({ out, chatId: ownerChat, ownerId, prompts });
    await current.sink(event);
  };
  const outbox = (room: string): ReplySink | undefined => (room === ownerId ? ownerSink : undefined);

  return {
    name: TELEGRAM_CHANNEL,
    outbox,
    ownerRoom: () => ownerId,

    async run(assistant: Assistant, signal: AbortSignal) {
      const roomsOf = (channel: string, room: string) =>
        channel === TELEGRAM_CHANNEL ? outbox(room) : undefined;
      const sweep = () =>
        assistant.expireOverdue(roomsOf).catch((error: Error) => {
          log.warn(`telegram: could not expire overdue questions: ${error.message}`);
          return 0;
        });
      await assistant.recover(roomsOf);
      await sweep();
      const sweeper = setInterval(() => void sweep(), options.sweepEveryMs ?? 30_000);
      sweeper.unref();

      const polling = startPolling({
        ...options.polling,
        log,
        init: async (initSignal) => {
          await bot.init(initSignal as GrammySignal);
          log.info(`telegram: polling as @${bot.botInfo.username}; only user ${ownerId} is heard`);
          // The command menu is a nicety: a server that cannot set it changes nothing else.
          void bot.api.raw.setMyCommands(commandsPayload()).catch((error) => {
            log.warn(`telegram: could not register the command menu: ${describeApiError(error)}`);
          });
        },
        // grammY types its signals with an AbortController polyfill; the standard one works the same.
        getUpdates: (args, pollSignal) => bot.api.getUpdates(args, pollSignal as GrammySignal),
        handle: updateRouter({
          assistant,
          out,
          ownerId,
          prompts,
          strangers: strangerLog(log),
          ...(options.typingEveryMs ? { typingEveryMs: options.typingEveryMs } : {}),
        }),
      });
      const stopped = new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      try {
        await Promise.race([polling.task, stopped]);
      } finally {
        clearInterval(sweeper);
        await polling.stop();
        await current?.finish();
      }
    },
  };
}
