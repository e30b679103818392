// The Telegram channel in webhook mode: updates are POSTed to the channel's own HTTP server as
// Telegram would, replies go to the telegram-test-api emulator, the scripted model answers over
// HTTP, and the real assistant runs on PGlite. An update is answered 200 only once it is safe.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type TelegramChannel, telegramChannel } from '../adapters/telegram/telegram-channel.ts';
import type { UpdateHandler } from '../adapters/telegram/update-router.ts';
import { startWebhookServer } from '../adapters/telegram/webhook-server.ts';
import { buildAssistant } from '../cli/build-assistant.ts';
import { openStore, type Runtime } from '../cli/runtime.ts';
import { createLogger } from '../src/log.ts';
import type { Db } from '../src/store/db.ts';
import { runChannel } from './support/run-channel.ts';
import {
  reply,
  type ScriptedModel,
  type ScriptStep,
  sseEvent,
  startScriptedModel,
  wireChunk,
} from './support/scripted-model.ts';
import { tempDir } from './support/services.ts';
import {
  emulatorRuntime,
  startTelegramEmulator,
  type TelegramEmulator,
  waitFor,
} from './support/telegram-emulator.ts';

const OWNER = 4242;
const STRANGER = 999;
const SECRET = 'webhook-Secret_42-0123456789';
const silent = createLogger('silent', []);

const shell = (command: string): ScriptStep => ({
  chunks: [],
  toolCalls: [{ name: 'shell', argumentChunks: [JSON.stringify({ command })] }],
});

let nextUpdateId = 1000;
let nextMessageId = 1;
const person = (id: number) => ({ id, is_bot: false, first_name: `u${id}` });
const messageUpdate = (from: number, text: string) => ({
  update_id: nextUpdateId++,
  message: {
    message_id: nextMessageId++,
    date: Math.floor(Date.now() / 1000),
    chat: { id: from, type: 'private', first_name: `u${from}` },
    from: person(from),
    text,
  },
});
const pressUpdate = (from: number, data: string, messageId: number) => ({
  update_id: nextUpdateId++,
  callback_query: {
    id: `cb-${nextUpdateId}`,
    from: person(from),
    chat_instance: 'ci',
    data,
    message: { message_id: messageId, date: 0, chat: { id: OWNER, type: 'private' } },
  },
});

describe('the Telegram channel in webhook mode', () => {
  let dir: ReturnType<typeof tempDir>;
  let workspace: string;
  let emulator: TelegramEmulator;
  let model: ScriptedModel | undefined;
  let db: Db | undefined;
  let stopChannel: (() => Promise<void>) | undefined;
  let url = '';
  /** User messages whose insert has returned, in order: what the log holds at a given moment. */
  let logged: string[] = [];

  beforeEach(async () => {
    dir = tempDir();
    logged = [];
    workspace = join(dir.path, 'workspace');
    mkdirSync(workspace, { recursive: true });
    emulator = await startTelegramEmulator();
  });
  afterEach(async () => {
    await stopChannel?.();
    stopChannel = undefined;
    await db?.close();
    db = undefined;
    await emulator.stop();
    await model?.close();
    model = undefined;
    dir.remove();
  });

  /**
   * The database, noting each user message once its insert returned (a lone statement commits).
   * The insert waits a little first, so that a 200 sent before it would reach the test first.
   */
  const watched = (target: Db): Db =>
    new Proxy(target, {
      get(t, prop) {
        if (prop !== 'query') {
          const value = Reflect.get(t, prop, t);
          return typeof value === 'function' ? value.bind(t) : value;
        }
        return async (sql: string, params?: unknown[]) => {
          const userMessage = /^insert into session_events/.test(sql) && params?.[2] === 'user_message';
          if (userMessage) await new Promise((resolve) => setTimeout(resolve, 300));
          const result = await t.query(sql, params);
          if (userMessage) logged.push(String((JSON.parse(String(params?.[3])) as { text?: unknown }).text));
          return result;
        };
      },
    });

  const runtime = (): Runtime => {
    if (!model) throw new Error('start the model first');
    return emulatorRuntime({
      dataDir: dir.path,
      workspace,
      modelUrl: model.baseUrl,
      emulator,
      ownerId: OWNER,
    });
  };

  const start = async () => {
    const rt = runtime();
    db ??= await openStore(rt);
    const built = await buildAssistant(rt, watched(db), { telegram: String(OWNER) });
    const telegram = rt.config.telegram;
    if (!telegram) throw new Error('telegram is not configured');
    const abort = new AbortController();
    const channel: TelegramChannel = telegramChannel({
      token: telegram.token,
      ownerId: telegram.ownerId,
      apiRoot: telegram.apiRoot,
      log: silent,
      transformers: [emulator.recorder],
      editIntervalMs: 100,
      webhook: {
        url: 'https://steward.example.org/telegram',
        host: '127.0.0.1',
        port: 0,
        path: '/telegram',
        secret: SECRET,
      },
    });
    const done = runChannel(channel, built.assistant, abort.signal);
    done.catch(() => {});
    const address = await waitFor(() => channel.webhookAddress(), 'the webhook server');
    url = `http://127.0.0.1:${address.port}/telegram`;
    await waitFor(() => emulator.calls.find((c) => c.method === 'setWebhook'), 'setWebhook');
    stopChannel = async () => {
      abort.abort();
      await done;
      built.stop();
    };
    return stopChannel;
  };

  const post = (update: unknown, secret: string | null = SECRET) =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(secret === null ? {} : { 'x-telegram-bot-api-secret-token': secret }),
      },
      body: JSON.stringify(update),
    });
  const userMessages = async () => {
    if (!db) throw new Error('no db');
    const rows = await db.query<{ payload: { text: string } }>(
      "select payload from session_events where kind = 'user_message' order by id",
    );
    return rows.rows.map((r) => r.payload.text);
  };
  const chat = () => emulator.botMessages(OWNER);
  const withText = (text: string) => () => chat().find((m) => m.text.includes(text));

  it('registers the webhook with its secret and the two update kinds', async () => {
    model = await startScriptedModel([]);
    await start();
    const call = emulator.calls.find((c) => c.method === 'setWebhook');
    expect(call?.payload).toMatchObject({
      url: 'https://steward.example.org/telegram',
      secret_token: SECRET,
      allowed_updates: ['message', 'callback_query'],
    });
    expect(emulator.calls.some((c) => c.method === 'deleteWebhook')).toBe(false);
  });

  it("answers 200 once the owner's message is logged, before the reply; the same update again is not answered twice", async () => {
    // The model's answer waits until the test has looked: the 200 cannot lean on the reply.
    const answer = Promise.withResolvers<void>();
    model = await startScriptedModel([
      {
        raw: [
          sseEvent(wireChunk({ role: 'assistant', content: 'Hello from the webhook.' })),
          sseEvent(wireChunk({}, 'stop')),
          'data: [DONE]\n\n',
        ],
        gate: { before: 0, open: answer.promise },
      },
    ]);
    await start();
    const update = messageUpdate(OWNER, 'hello');
    const response = await post(update);
    const loggedAtThe200 = [...logged];
    expect(response.status).toBe(200);
    // At the moment of the 200 the message is in the event log, and the model has not answered.
    expect(loggedAtThe200).toEqual(['hello']);
    expect(await userMessages()).toEqual(['hello']);
    expect(withText('Hello from the webhook.')()).toBeUndefined();
    answer.resolve();
    await waitFor(withText('Hello from the webhook.'), 'the reply');

    const again = await post(update);
    expect(again.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(model.requests).toHaveLength(1);
    expect(await userMessages()).toEqual(['hello']);
    expect(chat().filter((m) => m.text.includes('Hello from the webhook.'))).toHaveLength(1);
  });

  it('refuses a wrong or missing secret with 401 and logs nothing', async () => {
    model = await startScriptedModel([reply('Should not be asked.')]);
    await start();
    expect((await post(messageUpdate(OWNER, 'one'), 'not-the-secret')).status).toBe(401);
    expect((await post(messageUpdate(OWNER, 'two'), null)).status).toBe(401);
    expect((await post(messageUpdate(OWNER, 'three'), `${SECRET}x`)).status).toBe(401);
    expect(await userMessages()).toEqual([]);
    expect(model.requests).toHaveLength(0);
  });

  it("answers a stranger's update 200 and nothing reaches the model", async () => {
    model = await startScriptedModel([reply('Hi owner.')]);
    await start();
    expect((await post(messageUpdate(STRANGER, 'stranger-canary-5512'))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(model.requests).toHaveLength(0);
    expect(await userMessages()).toEqual([]);
    expect(emulator.botMessages(STRANGER)).toEqual([]);
  });

  it('a press on a permission prompt, POSTed as a callback query, runs the call and continues the turn', async () => {
    writeFileSync(join(workspace, 'notes.txt'), 'old notes\n');
    model = await startScriptedModel([shell('rm notes.txt'), reply('Removed notes.txt.')]);
    await start();
    expect((await post(messageUpdate(OWNER, 'please delete notes.txt'))).status).toBe(200);
    const prompt = await waitFor(
      () => chat().find((m) => m.text.includes('Permission needed')),
      'the permission prompt',
    );
    const once = prompt.buttons.find((b) => b.text === 'Once');
    if (!once) throw new Error('no Once button');
    expect((await post(pressUpdate(OWNER, once.data, prompt.messageId))).status).toBe(200);
    await waitFor(withText('Removed notes.txt.'), 'the reply after approval');
    const answers = emulator.calls.filter((c) => c.method === 'answerCallbackQuery');
    expect(answers.map((c) => c.payload.text)).toContain('Allowed once.');
    expect(model.requests).toHaveLength(2);
  });

  it('answers only POST on its path, and stop waits for a turn still running', async () => {
    model = await startScriptedModel([{ ...reply('Finished before the stop.'), headerDelayMs: 400 }]);
    const stop = await start();
    expect((await fetch(url)).status).toBe(405);
    expect((await fetch(url.replace('/telegram', '/other'), { method: 'POST', body: '{}' })).status).toBe(
      404,
    );
    expect((await post('not an update')).status).toBe(400);

    expect((await post(messageUpdate(OWNER, 'slow one'))).status).toBe(200);
    await stop();
    stopChannel = undefined;
    expect(withText('Finished before the stop.')()).toBeDefined();
  });
});

describe('the webhook server on its own', () => {
  const serve = async (handle: UpdateHandler, maxBodyBytes?: number) => {
    const server = await startWebhookServer({
      host: '127.0.0.1',
      port: 0,
      path: '/tg',
      secret: SECRET,
      handle,
      log: silent,
      ...(maxBodyBytes ? { maxBodyBytes } : {}),
    });
    const send = (body: string) =>
      fetch(`http://127.0.0.1:${server.address.port}/tg`, {
        method: 'POST',
        headers: { 'x-telegram-bot-api-secret-token': SECRET },
        body,
      });
    return { server, send };
  };

  it('answers 500 when handling fails before acceptance, and 200 when it fails after', async () => {
    const { server, send } = await serve(async (update, hooks) => {
      if (update.update_id === 2) hooks?.accepted?.();
      throw new Error('database down');
    });
    expect((await send(JSON.stringify({ update_id: 1, message: {} }))).status).toBe(500);
    expect((await send(JSON.stringify({ update_id: 2, message: {} }))).status).toBe(200);
    await server.stop(1000);
  });

  it('gives a copy that comes while the first is handled the same answer, handling it once', async () => {
    let calls = 0;
    let accept: (() => void) | undefined;
    const { server, send } = await serve(async (_update, hooks) => {
      calls++;
      accept = () => hooks?.accepted?.();
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    const body = JSON.stringify({ update_id: 7, message: {} });
    const first = send(body);
    await waitFor(() => accept, 'the first to be handled');
    const second = send(body);
    accept?.();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect(calls).toBe(1);
    await server.stop(1000);
  });

  it('refuses a body over the limit with 413', async () => {
    const { server, send } = await serve(async () => {}, 1024);
    expect((await send(JSON.stringify({ update_id: 1, message: { text: 'x'.repeat(4096) } }))).status).toBe(
      413,
    );
    await server.stop(1000);
  });
});
