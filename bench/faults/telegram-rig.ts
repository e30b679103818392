// One steward on Telegram for a scenario: the emulator (optionally behind the fault proxy), the
// scripted model, a private PostgreSQL, the mark tool, and the owner, who presses "Once" on every
// question. `start()` runs a fresh `steward start` on the same data; the suite kills it at will.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type ScriptedModel, startScriptedModel } from '../../test/support/scripted-model.ts';
import { tempDir } from '../../test/support/services.ts';
import { startTelegramEmulator, type TelegramEmulator } from '../../test/support/telegram-emulator.ts';
import { type FaultPlan, type FaultProxy, startFaultProxy } from './fault-proxy.ts';
import { type FaultModelOptions, faultModel } from './model.ts';
import { type StewardProcess, startSteward } from './steward-process.ts';
import { awaitTexts } from './tally.ts';

export const OWNER = 5151;
const MARK_SERVER = resolve(import.meta.dirname, 'mark-server.ts');

export interface RigOptions {
  dbUrl: string;
  model: FaultModelOptions;
  proxy?: FaultPlan;
  /** Extra config (digests, routes, providers) merged over the mark server's. */
  config?: Record<string, unknown>;
  /**
   * STEWARD_MODEL unset, so the default route comes from `config` (flapping runs put a flaky
   * endpoint first); the rig's model stays provider "default" (STEWARD_MODEL_BASE_URL).
   */
  routeFromConfig?: boolean;
  markPauseMs?: number;
}

export interface TelegramRig {
  emulator: TelegramEmulator;
  model: ScriptedModel;
  proxy?: FaultProxy;
  markFile: string;
  dataDir: string;
  start(): Promise<StewardProcess>;
  say(text: string): Promise<number>;
  /** Texts of the bot's messages in the owner's chat, in order, as last edited. */
  texts(): string[];
  /** Presses "Once" on every question not pressed yet (and again on one still open after 20 s). */
  pressQuestions(): Promise<number>;
  close(): Promise<void>;
}

export async function telegramRig(options: RigOptions): Promise<TelegramRig> {
  const dir = tempDir('steward-faults-');
  const workspace = join(dir.path, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const markFile = join(dir.path, 'marks.log');
  const emulator = await startTelegramEmulator();
  const proxy = options.proxy ? await startFaultProxy(emulator.apiRoot, options.proxy) : undefined;
  const model = await startScriptedModel(faultModel(options.model));
  const config = {
    mcp: {
      servers: {
        marks: {
          command: process.execPath,
          args: [MARK_SERVER],
          env: ['MARK_FILE', 'MARK_PAUSE_MS'],
          trusted: true,
          allow: ['mark'],
        },
      },
    },
    ...options.config,
  };
  const configFile = join(dir.path, 'steward.json');
  writeFileSync(configFile, JSON.stringify(config));
  const env: Record<string, string> = {
    STEWARD_CONFIG: configFile,
    STEWARD_DATA_DIR: dir.path,
    STEWARD_WORKSPACE: workspace,
    STEWARD_DATABASE_URL: options.dbUrl,
    STEWARD_TELEGRAM_TOKEN: emulator.token,
    STEWARD_TELEGRAM_OWNER_ID: String(OWNER),
    STEWARD_TELEGRAM_API_ROOT: proxy?.apiRoot ?? emulator.apiRoot,
    STEWARD_LOG_LEVEL: process.env.FAULTS_LOG_LEVEL ?? 'info',
    MARK_FILE: markFile,
    MARK_PAUSE_MS: String(options.markPauseMs ?? 300),
    STEWARD_MODEL_BASE_URL: model.baseUrl,
    ...(options.routeFromConfig ? {} : { STEWARD_MODEL: 'test-model' }),
  };
  const owner = emulator.user(OWNER);
  const pressed = new Map<string, number>();
  let log = '';
  let current: StewardProcess | undefined;
  return {
    emulator,
    model,
    ...(proxy ? { proxy } : {}),
    markFile,
    dataDir: dir.path,
    async start() {
      if (current) log = current.log();
      current = startSteward(env, log);
      await current.waitForLog(/telegram: polling as/, 60_000);
      return current;
    },
    async say(text) {
      await owner.say(text);
      return Date.now();
    },
    texts: () => emulator.botMessages(OWNER).map((m) => m.text),
    async pressQuestions() {
      let n = 0;
      for (const m of emulator.botMessages(OWNER)) {
        const once = m.buttons.find((b) => b.data.startsWith('p:o:'));
        if (!once || /decided|Allowed|Denied|not run|was dropped/i.test(m.text)) continue;
        const at = pressed.get(once.data);
        if (at !== undefined && Date.now() - at < 20_000) continue;
        pressed.set(once.data, Date.now());
        await owner.press(once.data, m.messageId, m.chatId);
        n++;
      }
      return n;
    },
    async close() {
      await current?.stop().catch(() => {});
      await proxy?.close();
      await model.close();
      await emulator.stop();
      dir.remove();
    },
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits until every expected text shows (pressing questions meanwhile); false at the deadline. */
export async function awaitReplies(
  rig: TelegramRig,
  expected: string[],
  timeoutMs: number,
  seenAt?: Map<string, number>,
): Promise<boolean> {
  const look = async () => {
    await rig.pressQuestions();
    return rig.texts();
  };
  return awaitTexts(look, expected, timeoutMs, 50, seenAt);
}
