// The Bot API emulator (npm telegram-test-api) started in the test process, plus a recorder of the
// calls the bot makes (the emulator answers some methods "not supported" and keeps no record of them).
import { createServer } from 'node:net';
import type { Transformer } from 'grammy';
// The class itself: the package's default export is typed as a namespace under nodenext.
import { TelegramServer } from 'telegram-test-api/lib/telegramServer.js';
import { htmlToPlain } from '../../adapters/telegram/html.ts';
import type { Runtime } from '../../cli/runtime.ts';
import { loadConfig } from '../../src/config/load.ts';
import { createLogger } from '../../src/log.ts';
import { confirmByOffset } from './emulator-offsets.ts';

export interface RecordedCall {
  method: string;
  payload: Record<string, unknown>;
}

export interface BotMessage {
  messageId: number;
  chatId: number;
  /** As the bot last sent or edited it (HTML as sent). */
  html: string;
  /** What the owner reads: tags dropped, entities decoded. */
  text: string;
  buttons: Array<{ text: string; data: string }>;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export async function startTelegramEmulator(token = '123456:TEST-token') {
  const server = new TelegramServer({ port: await freePort(), host: '127.0.0.1', storeTimeout: 3600 });
  confirmByOffset(server);
  await server.start();
  const calls: RecordedCall[] = [];
  const recorder: Transformer = (prev, method, payload, signal) => {
    if (method !== 'getUpdates') calls.push({ method, payload: payload as Record<string, unknown> });
    return prev(method, payload, signal);
  };
  const botMessages = (chatId?: number): BotMessage[] =>
    server.storage.botMessages
      .filter((u) => u.botToken === token && (chatId === undefined || Number(u.message.chat_id) === chatId))
      .map((u) => {
        const m = u.message as { chat_id: number | string; text?: string; reply_markup?: unknown };
        const markup = m.reply_markup as
          | { inline_keyboard?: Array<Array<{ text: string; callback_data?: string }>> }
          | undefined;
        const html = m.text ?? '';
        return {
          messageId: u.messageId,
          chatId: Number(m.chat_id),
          html,
          text: htmlToPlain(html),
          buttons: (markup?.inline_keyboard ?? [])
            .flat()
            .map((b) => ({ text: b.text, data: b.callback_data ?? '' })),
        };
      });
  return {
    server,
    token,
    apiRoot: server.config.apiURL,
    calls,
    recorder,
    botMessages,
    /** A private chat with the bot, as user `userId`. */
    user(userId: number) {
      const client = server.getClient(token, {
        userId,
        chatId: userId,
        type: 'private',
        firstName: `u${userId}`,
      });
      return {
        say: (text: string) =>
          text.startsWith('/')
            ? client.sendCommand(client.makeCommand(text))
            : client.sendMessage(client.makeMessage(text)),
        press: (data: string, messageId: number, chatId: number) =>
          client.sendCallback(
            client.makeCallbackQuery(data, { message: { message_id: messageId, chat: { id: chatId } } }),
          ),
      };
    },
    /** True once the bot has fetched every update sent so far. */
    allRead: () => server.storage.userMessages.every((u) => u.isRead),
    stop: () => server.stop(),
  };
}

export type TelegramEmulator = Awaited<ReturnType<typeof startTelegramEmulator>>;

/** Polls `check` until it returns something truthy. */
export async function waitFor<T>(
  check: () => T | undefined | false,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The runtime `steward start` would build for this emulator, the scripted model and a data folder. */
export function emulatorRuntime(opts: {
  dataDir: string;
  workspace: string;
  modelUrl: string;
  emulator: { token: string; apiRoot: string };
  ownerId: number;
}): Runtime {
  const config = loadConfig(
    {
      STEWARD_DATA_DIR: opts.dataDir,
      STEWARD_WORKSPACE: opts.workspace,
      STEWARD_MODEL_BASE_URL: opts.modelUrl,
      STEWARD_MODEL: 'test-model',
      STEWARD_TELEGRAM_TOKEN: opts.emulator.token,
      STEWARD_TELEGRAM_OWNER_ID: String(opts.ownerId),
      STEWARD_TELEGRAM_API_ROOT: opts.emulator.apiRoot,
    },
    opts.dataDir,
  );
  return { config, log: createLogger('silent', []) };
}
