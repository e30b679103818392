// A getUpdates answer lost on the way back (Telegram handed the update out, the connection reset
// before the bot read it) must not lose the owner's message: the bot has not confirmed it, so the
// next poll brings it again and it is answered once. Found by `npm run faults` ("telegram: 429 /
// 5xx / resets / slow"): a slow poll the bot gave up on took the message with it, 1–2 of 30.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { HttpError, type Transformer } from 'grammy';
import { afterEach, describe, expect, it } from 'vitest';
import { telegramChannel } from '../adapters/telegram/telegram-channel.ts';
import { buildAssistant } from '../cli/build-assistant.ts';
import { openStore } from '../cli/runtime.ts';
import { createLogger } from '../src/log.ts';
import { runChannel } from './support/run-channel.ts';
import { reply, type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { tempDir } from './support/services.ts';
import {
  emulatorRuntime,
  startTelegramEmulator,
  type TelegramEmulator,
  waitFor,
} from './support/telegram-emulator.ts';

const OWNER = 6161;
const silent = createLogger('silent', []);

describe('the emulator keeps an update until an offset confirms it, as Telegram does', () => {
  let emulator: TelegramEmulator | undefined;
  afterEach(async () => {
    await emulator?.stop();
  });

  it('hands the same update out again until a later offset, then never', async () => {
    emulator = await startTelegramEmulator();
    await emulator.user(OWNER).say('hello');
    const poll = async (offset?: number) => {
      const res = await fetch(`${emulator?.apiRoot}/bot${emulator?.token}/getUpdates`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(offset === undefined ? {} : { offset }),
      });
      const body = (await res.json()) as {
        result: Array<{ update_id: number; message?: { text?: string } }>;
      };
      return body.result;
    };
    const first = await poll();
    expect(first.map((u) => u.message?.text)).toEqual(['hello']);
    const id = first[0]?.update_id as number;
    expect((await poll()).map((u) => u.update_id)).toEqual([id]);
    expect((await poll(id)).map((u) => u.update_id)).toEqual([id]);
    expect(await poll(id + 1)).toEqual([]);
    expect(await poll()).toEqual([]);
  });
});

describe('a getUpdates answer lost after Telegram handed out the update', () => {
  let emulator: TelegramEmulator | undefined;
  let model: ScriptedModel | undefined;
  let dir: ReturnType<typeof tempDir> | undefined;
  afterEach(async () => {
    await emulator?.stop();
    await model?.close();
    dir?.remove();
  });

  it('does not lose the message: the next poll brings it again and it is answered once', async () => {
    dir = tempDir();
    const workspace = join(dir.path, 'workspace');
    mkdirSync(workspace, { recursive: true });
    emulator = await startTelegramEmulator();
    model = await startScriptedModel([reply('Got it.')]);
    const runtime = emulatorRuntime({
      dataDir: dir.path,
      workspace,
      modelUrl: model.baseUrl,
      emulator,
      ownerId: OWNER,
    });
    const db = await openStore(runtime);
    const built = await buildAssistant(runtime, db, { telegram: String(OWNER) });
    // The first poll that brings an update reaches the emulator, then its answer is lost.
    let lost = 0;
    const resetAfterServing: Transformer = async (prev, method, payload, signal) => {
      const result = await prev(method, payload, signal);
      const updates = (result as { result?: unknown[] }).result;
      if (method === 'getUpdates' && lost === 0 && Array.isArray(updates) && updates.length > 0) {
        lost++;
        throw new HttpError('Network request for getUpdates failed!', new Error('read ECONNRESET'));
      }
      return result;
    };
    const abort = new AbortController();
    const channel = telegramChannel({
      token: emulator.token,
      ownerId: OWNER,
      apiRoot: emulator.apiRoot,
      log: silent,
      transformers: [resetAfterServing, emulator.recorder],
      editIntervalMs: 50,
      polling: { idlePollMs: 25, timeoutSeconds: 0, backoff: { firstMs: 50, maxMs: 100 } },
    });
    const done = runChannel(channel, built.assistant, abort.signal);
    try {
      await emulator.user(OWNER).say('are you there?');
      await waitFor(
        () => emulator?.botMessages(OWNER).find((m) => m.text === 'Got it.'),
        'the answer to the message whose poll was lost',
        20_000,
      );
      expect(lost).toBe(1);
      await new Promise((r) => setTimeout(r, 300));
      expect(emulator.botMessages(OWNER).map((m) => m.text)).toEqual(['Got it.']);
      expect(model.requests).toHaveLength(1);
    } finally {
      abort.abort();
      await done;
      built.stop();
      await db.close();
    }
  }, 40_000);
});
