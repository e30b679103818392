// Telegram as a contract driver: the real grammY client against the telegram-test-api emulator,
// the assistant as `steward start` builds it. The owner and a stranger each have a private chat.

import { telegramChannel } from '../../adapters/telegram/telegram-channel.ts';
import { buildAssistant } from '../../cli/build-assistant.ts';
import { openStore } from '../../cli/runtime.ts';
import type { PermissionDecision } from '../../src/channel/port.ts';
import { loadConfig } from '../../src/config/load.ts';
import { createLogger } from '../../src/log.ts';
import { type ChannelDriver, type PromptHandle, sleep } from './contract-drivers.ts';
import { runChannel } from './run-channel.ts';
import { tempDir } from './services.ts';
import { startTelegramEmulator, type TelegramEmulator, waitFor } from './telegram-emulator.ts';

const OWNER = 4242;
const STRANGER = 999;
const LABELS: Record<PermissionDecision, string> = { once: 'Once', session: 'Session', deny: 'Deny' };

export function telegramDriver(): ChannelDriver {
  let emulator: TelegramEmulator | undefined;
  let running: { stop(): Promise<void> } | undefined;
  let promptsTaken = 0;

  const em = () => {
    if (!emulator) throw new Error('telegram driver not started');
    return emulator;
  };
  const chat = () => em().botMessages(OWNER);
  const answers = () =>
    em()
      .calls.filter((c) => c.method === 'answerCallbackQuery')
      .map((c) => String(c.payload.text));

  return {
    name: 'telegram',
    hasStranger: true,
    helpCommands: ['/help'],
    async prepare() {},

    async start(model, workspace) {
      const dir = tempDir('steward-contract-telegram-');
      emulator = await startTelegramEmulator();
      promptsTaken = 0;
      const log = createLogger('silent', []);
      const rt = {
        config: loadConfig(
          {
            STEWARD_DATA_DIR: dir.path,
            STEWARD_WORKSPACE: workspace,
            STEWARD_MODEL_BASE_URL: model.baseUrl,
            STEWARD_MODEL: 'test-model',
          },
          dir.path,
        ),
        log,
      };
      const db = await openStore(rt);
      const built = await buildAssistant(rt, db, { telegram: String(OWNER) });
      const abort = new AbortController();
      const channel = telegramChannel({
        token: emulator.token,
        ownerId: OWNER,
        apiRoot: emulator.apiRoot,
        log,
        transformers: [emulator.recorder],
        editIntervalMs: 100,
        polling: { idlePollMs: 25, timeoutSeconds: 0 },
      });
      const done = runChannel(channel, built.assistant, abort.signal);
      const stopping = emulator;
      running = {
        async stop() {
          abort.abort();
          await done;
          built.stop();
          await db.close();
          await stopping.stop();
          dir.remove();
        },
      };
    },

    async ownerSays(text) {
      await em().user(OWNER).say(text);
    },
    async strangerSays(text) {
      await em().user(STRANGER).say(text);
      await waitFor(() => em().allRead(), 'the stranger message to be fetched');
      await sleep(300);
    },
    async waitForReply(text, nth = 1) {
      return waitFor(
        () => chat().filter((m) => m.text.includes(text))[nth - 1]?.text,
        `a bot message "${text}" (${nth})`,
      );
    },
    async waitForPrompt() {
      const n = promptsTaken++;
      const prompt = await waitFor(
        () => chat().filter((m) => m.text.includes('Permission needed'))[n],
        'a permission prompt',
      );
      return { id: String(prompt.messageId), text: prompt.text } satisfies PromptHandle;
    },
    async approve(prompt, decision, as = 'owner') {
      const message = chat().find((m) => String(m.messageId) === prompt.id);
      const button = message?.buttons.find((b) => b.text === LABELS[decision]);
      if (!message || !button) throw new Error(`no ${LABELS[decision]} button on prompt ${prompt.id}`);
      const before = answers().length;
      await em()
        .user(as === 'owner' ? OWNER : STRANGER)
        .press(button.data, message.messageId, OWNER);
      // Every press is answered (a stranger's with a refusal), before anything it allowed runs:
      // then a little time for a wrongly honoured press to show.
      if (as === 'stranger') {
        await waitFor(() => answers().length > before, "the stranger's press");
        await sleep(300);
      }
    },
    async botMessages() {
      return em()
        .botMessages()
        .map((m) => m.text);
    },
    async stop() {
      await running?.stop();
      running = undefined;
      emulator = undefined;
    },
  };
}
