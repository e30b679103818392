// The Telegram channel end to end: the real grammY client against the telegram-test-api emulator,
// the scripted model over HTTP, the real assistant as `steward start` builds it, on PGlite.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type TelegramChannelOptions, telegramChannel } from '../adapters/telegram/telegram-channel.ts';
import { buildAssistant } from '../cli/build-assistant.ts';
import { openStore, type Runtime } from '../cli/runtime.ts';
import { createLogger } from '../src/log.ts';
import type { Db } from '../src/store/db.ts';
import { runChannel } from './support/run-channel.ts';
import { reply, type ScriptedModel, type ScriptStep, startScriptedModel } from './support/scripted-model.ts';
import { tempDir } from './support/services.ts';
import {
  type BotMessage,
  emulatorRuntime,
  startTelegramEmulator,
  type TelegramEmulator,
  waitFor,
} from './support/telegram-emulator.ts';

const OWNER = 4242;
const STRANGER = 999;
const silent = createLogger('silent', []);

const shell = (command: string): ScriptStep => ({
  chunks: [],
  toolCalls: [{ name: 'shell', argumentChunks: [JSON.stringify({ command })] }],
});

describe('the Telegram channel against the Bot API emulator', () => {
  let dir: ReturnType<typeof tempDir>;
  let workspace: string;
  let emulator: TelegramEmulator;
  let model: ScriptedModel | undefined;
  let db: Db | undefined;
  let running: Array<{ stop(): Promise<void> }>;

  beforeEach(async () => {
    dir = tempDir();
    workspace = join(dir.path, 'workspace');
    mkdirSync(workspace, { recursive: true });
    emulator = await startTelegramEmulator();
    running = [];
  });
  afterEach(async () => {
    for (const r of running) await r.stop();
    await db?.close();
    db = undefined;
    await emulator.stop();
    await model?.close();
    model = undefined;
    dir.remove();
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

  /** `steward start` as cli/commands/start.ts wires it, with short intervals for the emulator. */
  const start = async (extra: Partial<TelegramChannelOptions> = {}) => {
    const rt = runtime();
    db ??= await openStore(rt);
    const built = await buildAssistant(rt, db, { telegram: String(OWNER) });
    const telegram = rt.config.telegram;
    if (!telegram) throw new Error('telegram is not configured');
    const abort = new AbortController();
    const channel = telegramChannel({
      token: telegram.token,
      ownerId: telegram.ownerId,
      apiRoot: telegram.apiRoot,
      log: silent,
      transformers: [emulator.recorder],
      editIntervalMs: 100,
      polling: { idlePollMs: 25, timeoutSeconds: 0 },
      ...extra,
    });
    const done = runChannel(channel, built.assistant, abort.signal);
    const handle = {
      done,
      async stop() {
        abort.abort();
        await done;
        built.stop();
        running = running.filter((r) => r !== handle);
      },
    };
    running.push(handle);
    return handle;
  };

  const owner = () => emulator.user(OWNER);
  const chat = () => emulator.botMessages(OWNER);
  const withText = (text: string) => () => chat().find((m) => m.text.includes(text));
  const prompts = () => chat().filter((m) => m.text.includes('Permission needed'));
  const press = (message: BotMessage, label: string, as = OWNER) => {
    const button = message.buttons.find((b) => b.text === label);
    if (!button) throw new Error(`no ${label} button on ${message.text}`);
    return emulator.user(as).press(button.data, message.messageId, OWNER);
  };
  const answers = () =>
    emulator.calls.filter((c) => c.method === 'answerCallbackQuery').map((c) => String(c.payload.text));

  it('1: the owner says hello and gets the model reply, once, with a typing indicator and the command menu', async () => {
    model = await startScriptedModel([reply('Hello! **How** can I help?')]);
    await start();
    await owner().say('hello');
    const answer = await waitFor(
      () => chat().find((m) => m.text === 'Hello! How can I help?'),
      'the rendered reply',
    );
    expect(answer.html).toBe('Hello! <b>How</b> can I help?');
    // Streamed into one message and edited: the answer is in the chat exactly once.
    expect(chat().filter((m) => m.text.includes('can I help'))).toHaveLength(1);
    expect(model.requests).toHaveLength(1);
    const typing = emulator.calls.find((c) => c.method === 'sendChatAction');
    expect(typing?.payload).toEqual({ chat_id: OWNER, action: 'typing' });
    const menu = emulator.calls.find((c) => c.method === 'setMyCommands');
    expect(((menu?.payload.commands ?? []) as Array<{ command: string }>).map((c) => c.command)).toEqual(
      expect.arrayContaining(['start', 'help', 'new', 'cost', 'grants', 'revoke', 'output']),
    );
  });

  it("2: a stranger's message gets nothing and never reaches the model", async () => {
    model = await startScriptedModel([reply('Hi owner.')]);
    await start();
    await emulator.user(STRANGER).say('hello, I am stranger-canary-7731');
    await waitFor(() => emulator.allRead(), 'the stranger message to be fetched');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(model.requests).toHaveLength(0);
    expect(emulator.botMessages(STRANGER)).toEqual([]);
    expect(emulator.calls.filter((c) => c.payload.chat_id === STRANGER)).toEqual([]);
    // The owner is still heard, and only the owner's words reached the model.
    await owner().say('hello');
    await waitFor(withText('Hi owner.'), 'the reply to the owner');
    expect(JSON.stringify(model.requests)).not.toContain('stranger-canary-7731');
  });

  it("3: a shell call asks with Once / Session / Deny; a stranger's press does nothing; Once runs it; a second press runs nothing", async () => {
    writeFileSync(join(workspace, 'notes.txt'), 'old notes\n');
    model = await startScriptedModel([shell('rm notes.txt'), reply('Removed notes.txt.')]);
    await start();
    await owner().say('please delete notes.txt');
    const prompt = await waitFor(() => prompts()[0], 'the permission prompt');
    expect(prompt.buttons.map((b) => b.text)).toEqual(['Once', 'Session', 'Deny']);
    for (const b of prompt.buttons) expect(Buffer.byteLength(b.data)).toBeLessThanOrEqual(64);
    expect(prompt.text).toContain('shell');
    expect(prompt.text).toContain('rm notes.txt');
    expect(prompt.text).toMatch(/Danger: \d \((harmless|low|moderate|destructive)\) · layer: \w+/);
    expect(prompt.text).toMatch(/Why: \S+/);

    await press(prompt, 'Once', STRANGER);
    await waitFor(() => answers().find((a) => /not allowed/i.test(a)), "the stranger's press to be answered");
    expect(existsSync(join(workspace, 'notes.txt'))).toBe(true);
    expect(chat().find((m) => m.messageId === prompt.messageId)?.buttons).toHaveLength(3);
    expect(model.requests).toHaveLength(1);

    await press(prompt, 'Once');
    await waitFor(withText('Removed notes.txt.'), 'the reply after approval');
    expect(existsSync(join(workspace, 'notes.txt'))).toBe(false);
    const settled = chat().find((m) => m.messageId === prompt.messageId);
    expect(settled?.text).toContain('Allowed once by you');
    expect(settled?.text).toContain('rm notes.txt');
    expect(settled?.buttons).toEqual([]);
    expect(answers()).toContain('Allowed once.');

    const before = answers().length;
    await press(prompt, 'Once');
    await waitFor(() => answers().length > before && answers().at(-1), 'the second press to be answered');
    expect(answers().at(-1)).toMatch(/already settled/);
    expect(model.requests).toHaveLength(2);
    expect(chat().filter((m) => m.text.includes('Removed notes.txt.'))).toHaveLength(1);
  });

  it('4: "Session" lets a later non-destructive call of the same program run without asking; a destructive one still asks', async () => {
    model = await startScriptedModel([
      shell('touch a.txt'),
      reply('Created a.'),
      shell('touch b.txt'),
      reply('Created b.'),
      shell('rm a.txt'),
      reply('Removed a.'),
    ]);
    await start();
    await owner().say('make a');
    const first = await waitFor(() => prompts()[0], 'the first prompt');
    await press(first, 'Session');
    await waitFor(withText('Created a.'), 'the first reply');
    expect(chat().find((m) => m.messageId === first.messageId)?.text).toContain(
      'Allowed for this session by you',
    );

    await owner().say('make b');
    await waitFor(withText('Created b.'), 'the second reply, without a prompt');
    expect(prompts()).toHaveLength(1);
    expect(existsSync(join(workspace, 'b.txt'))).toBe(true);

    await owner().say('remove a');
    const second = await waitFor(() => prompts()[1], 'a prompt for the destructive call');
    expect(second.text).toContain('rm a.txt');
    expect(existsSync(join(workspace, 'a.txt'))).toBe(true);
  });

  it('5: a 200,000-line output shows its ref in the chat, with /output and a button for the whole of it', async () => {
    model = await startScriptedModel([shell('seq 1 200000'), reply('Printed the numbers.')]);
    await start();
    await owner().say('count to 200000');
    // Whichever gate is wired: approve if asked.
    const stored = await waitFor(() => {
      const asked = prompts()[0];
      if (asked && asked.buttons.length > 0 && !asked.text.includes('Allowed')) void press(asked, 'Once');
      return chat().find((m) => m.text.includes('output stored'));
    }, 'the stored-output line');
    const ref = /ref ([0-9a-f-]{36})/.exec(stored.text)?.[1];
    expect(ref).toBeDefined();
    // The shell result is the 200,000 lines of seq plus its exit status and section headers.
    const lines = Number(/([\d,]+) lines/.exec(stored.text)?.[1]?.replaceAll(',', ''));
    expect(lines).toBeGreaterThanOrEqual(200_000);
    expect(stored.text).toContain(`/output ${ref}`);
    expect(stored.buttons).toEqual([{ text: 'Get the whole output', data: `o:${ref}` }]);
    await waitFor(withText('Printed the numbers.'), 'the reply');

    // The emulator cannot take files: the attempt is recorded, and the owner is told.
    await owner().say(`/output ${ref}`);
    const upload = await waitFor(() => emulator.calls.find((c) => c.method === 'sendDocument'), 'the upload');
    const document = upload.payload.document as { filename: string; fileData: Uint8Array };
    expect(document.filename).toBe(`shell-output-${ref?.slice(0, 8)}.txt`);
    const content = Buffer.from(document.fileData).toString('utf8');
    expect(content).toContain('\n1\n2\n3\n');
    expect(content).toContain('\n199999\n200000\n');
    expect(content.split('\n')).toHaveLength(lines + 1);
    await waitFor(withText('Could not send the output as a file'), 'the note that the upload failed');

    await press(stored, 'Get the whole output');
    await waitFor(
      () => answers().includes('Sending the whole output as a file…'),
      'the button to be answered',
    );
    await waitFor(
      () => emulator.calls.filter((c) => c.method === 'sendDocument').length === 2,
      'a second upload',
    );
    expect(model.requests).toHaveLength(2);
  });

  it("6: after a restart with a question pending, the owner's press completes the turn", async () => {
    writeFileSync(join(workspace, 'notes.txt'), 'old notes\n');
    model = await startScriptedModel([shell('rm notes.txt'), reply('Deleted after the restart.')]);
    const first = await start();
    await owner().say('delete notes.txt');
    const prompt = await waitFor(() => prompts()[0], 'the prompt');
    await first.stop();
    await db?.close();
    db = undefined;

    await start();
    await press(prompt, 'Once');
    await waitFor(withText('Deleted after the restart.'), 'the reply after the restart');
    expect(existsSync(join(workspace, 'notes.txt'))).toBe(false);
    const settled = chat().find((m) => m.messageId === prompt.messageId);
    expect(settled?.text).toContain('Allowed once by you');
    expect(settled?.buttons).toEqual([]);
    expect(model.requests).toHaveLength(2);
  });

  it('a command too long for a message goes as a file with the buttons; when the file cannot go, only Deny is offered', async () => {
    const command = `rm ${'x'.repeat(5000)}.txt`;
    model = await startScriptedModel([shell(command), reply('Left it alone.')]);
    await start();
    await owner().say('remove the long one');
    const upload = await waitFor(() => emulator.calls.find((c) => c.method === 'sendDocument'), 'the upload');
    const file = upload.payload.document as { filename: string; fileData: Uint8Array };
    expect(Buffer.from(file.fileData).toString('utf8')).toContain(command);
    expect(String(upload.payload.caption)).toContain('in this file, in full');
    const keyboard = upload.payload.reply_markup as { inline_keyboard: Array<Array<{ text: string }>> };
    expect(keyboard.inline_keyboard.flat().map((b) => b.text)).toEqual(['Once', 'Session', 'Deny']);
    // The emulator refuses files: the prompt shown instead is cut, so it cannot be approved.
    const prompt = await waitFor(() => prompts()[0], 'the fallback prompt');
    expect(prompt.text).toContain('can only be denied');
    expect(prompt.text).not.toContain(command);
    expect(prompt.buttons.map((b) => b.text)).toEqual(['Deny']);
    await press(prompt, 'Deny');
    await waitFor(withText('Left it alone.'), 'the reply after the denial');
    expect(chat().find((m) => m.messageId === prompt.messageId)?.text).toContain('Denied by you');
  });

  it('/help lists the commands, /output among them, without asking the model', async () => {
    model = await startScriptedModel([]);
    await start();
    await owner().say('/help');
    const help = await waitFor(withText('/output <ref>'), 'the command list');
    expect(help.text).toContain('/new');
    expect(help.text).toContain('/research <question>');
    expect(model.requests).toHaveLength(0);
  });

  it('streams a long reply by editing one message, then splits the final answer at 4096 characters', async () => {
    const long = Array.from({ length: 120 }, (_, i) => `Line ${i}: ${'words '.repeat(10)}`).join('\n\n');
    model = await startScriptedModel([{ chunks: long.match(/[\s\S]{1,300}/g) ?? [] }]);
    await start();
    await owner().say('tell me a lot');
    await waitFor(withText('Line 119:'), 'the last part');
    const parts = chat();
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(p.html.length).toBeLessThanOrEqual(4096);
    expect(parts.filter((p) => p.text.includes('Line 0:'))).toHaveLength(1);
    expect(parts.map((p) => p.text).join('\n')).toContain('Line 60:');
  });

  it('a burst of messages gets one reply each, in order, and no reply waits for the edit pacer', async () => {
    // The pacer's slot is ten minutes: a reply that waited for it would never arrive in time.
    const texts = Array.from({ length: 8 }, (_, i) => `burst ${i}`);
    model = await startScriptedModel((body) => {
      const last = JSON.stringify((body.messages as unknown[]).at(-1));
      return reply(`answer to ${last.match(/burst \d+/)?.[0] ?? '?'} done`);
    });
    await start({ editIntervalMs: 600_000 });
    for (const text of texts) await owner().say(text);
    await waitFor(
      () => chat().filter((m) => m.text.endsWith(' done')).length === texts.length,
      'every reply',
    );
    expect(chat().map((m) => m.text)).toEqual(texts.map((t) => `answer to ${t} done`));
    // Each reply went out whole: sent once, never edited.
    expect(emulator.calls.filter((c) => c.method === 'editMessageText')).toHaveLength(0);
  });
});

describe('steward start with Telegram configured', () => {
  let dir: ReturnType<typeof tempDir>;
  let emulator: TelegramEmulator;
  let model: ScriptedModel;
  beforeEach(async () => {
    dir = tempDir();
    emulator = await startTelegramEmulator();
  });
  afterEach(async () => {
    await emulator.stop();
    await model?.close();
    dir.remove();
  });

  const spawnStart = (apiRoot: string) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, '../bin/steward.js'), 'start'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir.path,
        STEWARD_DATA_DIR: dir.path,
        STEWARD_MODEL_BASE_URL: model.baseUrl,
        STEWARD_MODEL: 'test-model',
        STEWARD_TELEGRAM_TOKEN: emulator.token,
        STEWARD_TELEGRAM_OWNER_ID: String(OWNER),
        STEWARD_TELEGRAM_API_ROOT: apiRoot,
        STEWARD_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    return { child, exited, stderr: () => stderr };
  };

  it('answers the owner until SIGTERM, then exits 0', async () => {
    model = await startScriptedModel([reply('Hello from the real process.')]);
    const steward = spawnStart(emulator.apiRoot);
    await emulator.user(OWNER).say('hello');
    await waitFor(
      () => emulator.botMessages(OWNER).find((m) => m.text === 'Hello from the real process.'),
      'the reply',
      30_000,
    );
    steward.child.kill('SIGTERM');
    expect(await steward.exited).toBe(0);
    expect(steward.stderr()).not.toContain(emulator.token);
  });

  it('says in one line that another process polls the token, and exits 1', async () => {
    model = await startScriptedModel([]);
    const server = createServer((req, res) => {
      const method = req.url?.split('/').at(-1);
      res.setHeader('content-type', 'application/json');
      if (method === 'getMe') {
        res.end(
          JSON.stringify({ ok: true, result: { id: 1, is_bot: true, first_name: 's', username: 's_bot' } }),
        );
      } else if (method === 'getUpdates') {
        res.statusCode = 409;
        res.end(
          JSON.stringify({
            ok: false,
            error_code: 409,
            description: 'Conflict: terminated by other getUpdates request',
          }),
        );
      } else res.end(JSON.stringify({ ok: true, result: true }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const steward = spawnStart(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      expect(await steward.exited).toBe(1);
      const lines = steward.stderr().trim().split('\n');
      expect(lines.at(-1)).toMatch(
        /^steward start: telegram: another process is polling this bot token \(409 Conflict\)/,
      );
      expect(steward.stderr()).not.toContain(emulator.token);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
