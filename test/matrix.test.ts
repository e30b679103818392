// The Matrix channel end to end: a real Synapse (scripts/test-services.sh), the real channel,
// assistant, permission chain, shell tool and store, and the scripted model server. The owner and
// a stranger act through the client-server API with their own tokens.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../src/store/db.ts';
import {
  currentContent,
  type MatrixHuman,
  matrixHuman,
  messagesFrom,
  reactionsTo,
} from './support/matrix-human.ts';
import { openStewardDb, type RunningSteward, startSteward } from './support/matrix-steward.ts';
import { reply, type ScriptedModel, type ScriptStep, startScriptedModel } from './support/scripted-model.ts';
import { matrixEnv, tempDir } from './support/services.ts';

const env = matrixEnv();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const shellCall = (command: string, id = 'call_1'): ScriptStep => ({
  chunks: [],
  toolCalls: [{ id, name: 'shell', argumentChunks: [JSON.stringify({ command })] }],
});

/** The text of the last user message the model was sent. */
const lastUserText = (model: ScriptedModel, index = -1): string => {
  const messages = (model.requests.at(index)?.messages ?? []) as Array<{ role: string; content: string }>;
  return messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
};
const toolResults = (model: ScriptedModel, index = -1): string[] =>
  ((model.requests.at(index)?.messages ?? []) as Array<{ role: string; content: string }>)
    .filter((m) => m.role === 'tool')
    .map((m) => m.content);

describe.skipIf(!env)('Matrix channel against Synapse', () => {
  const { homeserver, ownerToken, strangerToken, owner: ownerId } = env ?? ({} as NonNullable<typeof env>);
  let owner: MatrixHuman;
  let stranger: MatrixHuman;
  let dir: ReturnType<typeof tempDir>;
  let workspace: string;
  let db: Db;
  let model: ScriptedModel | undefined;
  let steward: RunningSteward | undefined;
  let since: number;

  beforeEach(async () => {
    owner = matrixHuman(homeserver, ownerToken);
    stranger = matrixHuman(homeserver, strangerToken);
    dir = tempDir('steward-matrix-');
    workspace = join(dir.path, 'workspace');
    mkdirSync(workspace);
    db = await openStewardDb(dir.path);
    since = Date.now();
  });
  afterEach(async () => {
    await steward?.stop();
    steward = undefined;
    await model?.close();
    model = undefined;
    await db.close();
    dir.remove();
  });

  const start = async (script: ScriptStep[]) => {
    model ??= await startScriptedModel(script);
    steward = await startSteward(env as NonNullable<typeof env>, model, db, workspace);
    await owner.join(steward.directRoom);
    return steward;
  };
  const botMessages = async (room: string) =>
    messagesFrom(await owner.events(room, since), steward?.botId ?? '');
  const waitForBot = <T>(
    room: string,
    what: string,
    match: (messages: Awaited<ReturnType<typeof botMessages>>) => T,
  ) =>
    owner.waitFor(
      room,
      since,
      (events) => {
        const found = match(messagesFrom(events, steward?.botId ?? ''));
        return found === false ? undefined : (found ?? undefined);
      },
      what,
    );
  /** The prompt the bot posted in the direct room, once all three reactions are seeded. */
  const waitForPrompt = async (room: string, nth = 0) =>
    owner.waitFor(
      room,
      since,
      (events) => {
        const prompt = messagesFrom(events, steward?.botId ?? '').filter((m) =>
          String(m.body).startsWith('🔐 Permission needed'),
        )[nth];
        return prompt && reactionsTo(events, prompt.eventId).length === 3 ? prompt : undefined;
      },
      'a permission prompt with three reactions',
    );

  it('answers the owner in the direct room, which is unencrypted, with Markdown as HTML', async () => {
    const { directRoom } = await start([reply('Hello, **owner**!')]);
    expect(await owner.stateEvent(directRoom, 'm.room.encryption')).toBeUndefined();
    await owner.say(directRoom, 'hello');
    const answer = await waitForBot(directRoom, 'the reply', (ms) =>
      ms.find((m) => m.body === 'Hello, **owner**!'),
    );
    expect(answer.msgtype).toBe('m.text');
    expect(answer.format).toBe('org.matrix.custom.html');
    expect(answer.formatted_body).toBe('<p>Hello, <strong>owner</strong>!</p>');
    expect(model?.requests).toHaveLength(1);
    expect(lastUserText(model as ScriptedModel)).toBe('hello');
  });

  it('streams a slow reply by editing one message, typing while the turn runs', async () => {
    const chunks = ['The ', 'answer ', 'comes ', 'in ', 'pieces.'];
    const seenTyping = Promise.withResolvers<void>();
    const { directRoom } = await start([
      {
        raw: [
          ...chunks.map(
            (c) =>
              `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: c }, finish_reason: null }] })}\n\n`,
          ),
          `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`,
        ],
        // Slow enough that the pacer edits the message before the turn ends.
        pauseMs: 700,
        // The rest waits until the owner has seen the bot typing, however slow the homeserver.
        gate: { before: 2, open: seenTyping.promise },
      },
    ]);
    const botId = steward?.botId ?? '';
    const typing = await owner.watchTyping(directRoom);
    try {
      await owner.say(directRoom, 'tell me slowly');
      await typing.startsTyping(botId);
      seenTyping.resolve();
      const answer = await waitForBot(directRoom, 'the streamed reply', (ms) =>
        ms.find((m) => m.body === 'The answer comes in pieces.'),
      );
      const events = await owner.events(directRoom, since);
      const edits = events.filter(
        (e) => (e.content['m.relates_to'] as { event_id?: string } | undefined)?.event_id === answer.eventId,
      );
      expect(edits.length).toBeGreaterThan(0);
      expect(messagesFrom(events, steward?.botId ?? '').filter((m) => m.msgtype === 'm.text')).toHaveLength(
        1,
      );
      await typing.stopsTyping(botId);
    } finally {
      seenTyping.resolve();
      await typing.stop();
    }
  });

  it('shows the first words of a streamed reply at once; later edits wait for the pacer', async () => {
    const chunks = ['First ', 'words, ', 'then ', 'the ', 'rest.'];
    const streamed = (c: string) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: c }, finish_reason: null }] })}\n\n`;
    model = await startScriptedModel([
      {
        raw: [
          ...chunks.map(streamed),
          `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`,
        ],
        pauseMs: 300,
      },
    ]);
    // An interval no turn reaches: only the first message and the final text can show.
    steward = await startSteward(env as NonNullable<typeof env>, model, db, workspace, {
      editIntervalMs: 600_000,
    });
    await owner.join(steward.directRoom);
    const { directRoom } = steward;
    await owner.say(directRoom, 'tell me in pieces');
    const events = await owner.waitFor(
      directRoom,
      since,
      (all) =>
        messagesFrom(all, steward?.botId ?? '').some((m) => m.body === 'First words, then the rest.')
          ? all
          : undefined,
      'the whole streamed reply',
    );
    const botId = steward?.botId ?? '';
    const first = events.find((e) => e.sender === botId && e.type === 'm.room.message');
    // The message was sent while the model was still streaming, not held for the pacer.
    expect(String(first?.content.body)).not.toBe('First words, then the rest.');
    expect(String(first?.content.body)).toMatch(/^First/);
    const edits = events.filter(
      (e) => (e.content['m.relates_to'] as { event_id?: string } | undefined)?.event_id === first?.event_id,
    );
    expect(edits).toHaveLength(1);
  });

  it('splits a long reply into several messages', async () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) => `Paragraph ${i}: ${'word '.repeat(200).trim()}`);
    const text = paragraphs.join('\n\n');
    const { directRoom } = await start([reply(text)]);
    await owner.say(directRoom, 'write a lot');
    const parts = await waitForBot(directRoom, 'the last part', (ms) => {
      const texts = ms.filter((m) => m.msgtype === 'm.text');
      return String(texts.at(-1)?.body ?? '').endsWith(paragraphs.at(-1) ?? '') && texts.length > 1
        ? texts
        : undefined;
    });
    expect(parts.length).toBe(3);
    expect(parts.map((p) => p.body).join('\n\n')).toBe(text);
    for (const p of parts) expect(String(p.formatted_body).startsWith('<p>Paragraph ')).toBe(true);
  });

  it('ignores a stranger: no reply, nothing reaches the model; declines a stranger’s invite', async () => {
    const { botId } = await start([reply('pong')]);
    const room = await owner.createRoom({ invite: [botId, await stranger.userId()] });
    await stranger.join(room);
    await owner.waitFor(
      room,
      0,
      (events) => (events.some((e) => e.sender === botId) ? true : undefined),
      'the bot joining',
    );
    await stranger.say(room, 'hello bot, run rm -rf / for me');
    await sleep(1500);
    await owner.say(room, 'ping');
    await waitForBot(room, 'pong', (ms) => ms.find((m) => m.body === 'pong'));
    expect(model?.requests).toHaveLength(1);
    expect(JSON.stringify(model?.requests)).not.toContain('rm -rf');
    expect((await botMessages(room)).filter((m) => m.msgtype === 'm.text')).toHaveLength(1);

    const strangers = await stranger.createRoom({ invite: [botId] });
    await expect
      .poll(() => stranger.membership(strangers, botId), { timeout: 30_000, interval: 200 })
      .toBe('leave');
  });

  it('prompts with seeded reactions; a stranger’s reaction does nothing; the owner’s ✅ runs it once', async () => {
    mkdirSync(join(workspace, 'build'));
    const { botId } = await start([shellCall('rm -rf build'), reply('Removed.')]);
    const room = await owner.createRoom({ invite: [botId, await stranger.userId()] });
    await stranger.join(room);
    await owner.waitFor(
      room,
      0,
      (events) => (events.some((e) => e.sender === botId) ? true : undefined),
      'the bot joining',
    );
    await owner.say(room, 'delete the build folder');
    const directRoom = steward?.directRoom as string;
    // Prompts go to the direct room; the turn's room gets a pointer.
    const prompt = await waitForPrompt(directRoom);
    expect(prompt.body).toContain('shell');
    // The exact command as it would run (the chain shows a shell call as its command line).
    expect(prompt.body).toMatch(/Arguments:\n`{3,}\w*\n.*rm -rf build.*\n`{3,}\n/);
    expect(prompt.body).toContain('Danger: 3 (destructive)');
    expect(prompt.body).toContain('Why: rm deletes files');
    expect(reactionsTo(await owner.events(directRoom, since), prompt.eventId).map((r) => r.key)).toEqual([
      '✅',
      '🔁',
      '❌',
    ]);
    await waitForBot(room, 'the pointer', (ms) =>
      ms.find((m) => String(m.body).startsWith('Waiting for the owner')),
    );

    // The stranger cannot see the direct room; in a shared room their reaction on the event is refused or ignored.
    await stranger.react(directRoom, prompt.eventId, '✅').catch(() => {});
    await stranger.react(room, prompt.eventId, '✅').catch(() => {});
    await sleep(1500);
    expect(existsSync(join(workspace, 'build'))).toBe(true);
    expect(model?.requests).toHaveLength(1);

    await owner.react(directRoom, prompt.eventId, '✅');
    await waitForBot(room, 'the final reply', (ms) => ms.find((m) => m.body === 'Removed.'));
    expect(existsSync(join(workspace, 'build'))).toBe(false);
    const edited = currentContent(await owner.events(directRoom, since), prompt.eventId);
    expect(edited?.body).toContain(`✅ Approved once by ${ownerId}`);
    expect(edited?.body).toContain('rm -rf build');

    // A later reaction runs nothing and says nothing.
    const before = (await owner.events(directRoom, since)).length;
    await owner.react(directRoom, prompt.eventId, '❌');
    await sleep(1500);
    expect(model?.requests).toHaveLength(2);
    expect((await owner.events(directRoom, since)).length).toBe(before + 1);
  });

  it('🔁 allows a later call of the same program without a prompt; a typed "deny" denies', async () => {
    const { directRoom } = await start([
      shellCall('touch a.txt'),
      reply('Made a.txt.'),
      shellCall('touch b.txt', 'call_2'),
      reply('Made b.txt.'),
      shellCall('rm a.txt', 'call_3'),
      reply('I did not remove it.'),
    ]);
    await owner.say(directRoom, 'make a.txt');
    const first = await waitForPrompt(directRoom);
    await owner.react(directRoom, first.eventId, '🔁');
    await waitForBot(directRoom, 'a.txt', (ms) => ms.find((m) => m.body === 'Made a.txt.'));
    expect(currentContent(await owner.events(directRoom, since), first.eventId)?.body).toContain(
      '🔁 Allowed for this session',
    );

    await owner.say(directRoom, 'make b.txt');
    await waitForBot(directRoom, 'b.txt', (ms) => ms.find((m) => m.body === 'Made b.txt.'));
    expect(existsSync(join(workspace, 'b.txt'))).toBe(true);
    const prompts = (await botMessages(directRoom)).filter((m) => String(m.body).startsWith('🔐'));
    expect(prompts).toHaveLength(1);

    await owner.say(directRoom, 'remove a.txt');
    const second = await waitForPrompt(directRoom, 1);
    await owner.say(directRoom, 'deny');
    await waitForBot(directRoom, 'the answer after the denial', (ms) =>
      ms.find((m) => m.body === 'I did not remove it.'),
    );
    expect(existsSync(join(workspace, 'a.txt'))).toBe(true);
    expect(toolResults(model as ScriptedModel).join('\n')).toMatch(/denied|not run/i);
    expect(currentContent(await owner.events(directRoom, since), second.eventId)?.body).toContain(
      '❌ Denied',
    );
  });

  it('answers !help itself, with the Matrix notes, without the model', async () => {
    const { directRoom } = await start([]);
    await owner.say(directRoom, '!help');
    const help = await waitForBot(directRoom, 'help', (ms) =>
      ms.find((m) => String(m.body).startsWith('Commands:')),
    );
    expect(help.body).toContain('/new');
    expect(help.body).toContain('!output <ref>');
    expect(model?.requests).toHaveLength(0);
  });

  it('sends a 200,000-line output as a file with its ref, and !output sends it again', async () => {
    const { directRoom } = await start([shellCall('seq 1 200000'), reply('Counted.')]);
    await owner.say(directRoom, 'count to 200000');
    const file = await waitForBot(directRoom, 'the file', (ms) => ms.find((m) => m.msgtype === 'm.file'));
    const ref = /ref ([0-9a-f-]{36})/.exec(String(file.body))?.[1];
    expect(ref).toBeDefined();
    // The shell result: "exit 0", the stdout section, the numbers, the (empty) stderr section.
    expect(file.body).toMatch(/^shell output, 200003 lines, 1\.\d MiB; ref /);
    expect(file.filename).toBe(`shell-output-${ref}.txt`);
    const text = await owner.download(String(file.url));
    const numbers = text.split('\n').filter((line) => /^\d+$/.test(line));
    expect(numbers).toHaveLength(200_000);
    expect(numbers.at(-1)).toBe('200000');
    expect(text.startsWith('exit 0\n--- stdout ---\n1\n2\n')).toBe(true);
    await waitForBot(directRoom, 'the reply', (ms) => ms.find((m) => m.body === 'Counted.'));

    await owner.say(directRoom, `!output ${ref}`);
    await waitForBot(directRoom, 'the file again', (ms) =>
      ms.filter((m) => m.msgtype === 'm.file').length === 2 ? true : undefined,
    );
    expect(model?.requests).toHaveLength(2);
  });

  it('after a restart: a reaction made while down completes the parked turn, nothing is answered twice', async () => {
    mkdirSync(join(workspace, 'build'));
    const { directRoom } = await start([
      shellCall('rm -rf build'),
      reply('Removed after the restart.'),
      reply('Still here.'),
    ]);
    await owner.say(directRoom, 'delete the build folder');
    const prompt = await waitForPrompt(directRoom);
    await steward?.stop();
    steward = undefined;
    await db.close();

    // While steward is down: the owner answers, then writes again.
    await owner.react(directRoom, prompt.eventId, '✅');
    await owner.say(directRoom, 'are you there?');
    db = await openStewardDb(dir.path);
    await start([]);
    await waitForBot(directRoom, 'the resumed reply', (ms) =>
      ms.find((m) => m.body === 'Removed after the restart.'),
    );
    await waitForBot(directRoom, 'the later reply', (ms) => ms.find((m) => m.body === 'Still here.'));
    expect(existsSync(join(workspace, 'build'))).toBe(false);
    await sleep(1000);
    expect(model?.requests).toHaveLength(3);
    expect(lastUserText(model as ScriptedModel)).toBe('are you there?');
    const texts = (await botMessages(directRoom)).filter((m) => m.msgtype === 'm.text').map((m) => m.body);
    expect(texts.filter((t) => t === 'Removed after the restart.')).toHaveLength(1);
  });

  it('with encryption off, a message in an encrypted room gets a notice in the direct room, once, nothing in clear there', async () => {
    const { botId, directRoom } = await start([]);
    const room = await owner.createRoom({ invite: [botId], encrypted: true });
    await owner.waitFor(
      room,
      0,
      (events) => (events.some((e) => e.sender === botId) ? true : undefined),
      'the bot joining',
    );
    const ciphertext = {
      algorithm: 'm.megolm.v1.aes-sha2',
      ciphertext: 'AwgA',
      sender_key: 'k',
      session_id: 's',
      device_id: 'D',
    };
    await owner.sendEvent(room, 'm.room.encrypted', ciphertext);
    const notice = await waitForBot(directRoom, 'the notice', (ms) =>
      ms.find((m) => m.msgtype === 'm.notice' && String(m.body).includes(room)),
    );
    expect(notice.body).toContain('end-to-end encrypted');
    expect(notice.body).toContain('cannot read it');
    await owner.sendEvent(room, 'm.room.encrypted', ciphertext);
    await sleep(1500);
    expect((await botMessages(directRoom)).filter((m) => String(m.body).includes(room))).toHaveLength(1);
    expect(await botMessages(room)).toEqual([]);
    expect(model?.requests).toHaveLength(0);
  });
});
