// The owner's own direct chat as the private room, against the real Synapse: a DM the owner opens
// (is_direct, only the two of them) is adopted instead of a room of the bot's own, and prompts for
// turns in it appear in it. Each test has a bot account of its own, so m.direct and the bot's rooms
// start empty and "no second room" can be checked exactly.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../src/store/db.ts';
import { botAccountToken } from './support/matrix-accounts.ts';
import {
  currentContent,
  type MatrixHuman,
  matrixHuman,
  messagesFrom,
  reactionsTo,
} from './support/matrix-human.ts';
import { openStewardDb, type RunningSteward, startSteward } from './support/matrix-steward.ts';
import { reply, type ScriptedModel, type ScriptStep, startScriptedModel } from './support/scripted-model.ts';
import { type MatrixEnv, matrixEnv, tempDir } from './support/services.ts';

const env = matrixEnv();
const shellCall = (command: string, id = 'call_1'): ScriptStep => ({
  chunks: [],
  toolCalls: [{ id, name: 'shell', argumentChunks: [JSON.stringify({ command })] }],
});

describe.skipIf(!env)('Matrix: the owner’s direct chat is the private room', () => {
  const base = env ?? ({} as MatrixEnv);
  let owner: MatrixHuman;
  let stranger: MatrixHuman;
  let bot: MatrixHuman;
  let botEnv: MatrixEnv;
  let botId: string;
  let dir: ReturnType<typeof tempDir>;
  let workspace: string;
  let db: Db;
  let model: ScriptedModel | undefined;
  let steward: RunningSteward | undefined;
  let since: number;

  beforeEach(async () => {
    const user = `steward-dm-${randomUUID().slice(0, 8)}`;
    botEnv = { ...base, botToken: await botAccountToken(base.homeserver, user, 'STEWARD_DM') };
    owner = matrixHuman(base.homeserver, base.ownerToken);
    stranger = matrixHuman(base.homeserver, base.strangerToken);
    bot = matrixHuman(base.homeserver, botEnv.botToken);
    botId = await bot.userId();
    dir = tempDir('steward-matrix-dm-');
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
    model = await startScriptedModel(script);
    steward = await startSteward(botEnv, model, db, workspace);
    return steward;
  };
  const waitForBot = <T>(room: string, what: string, match: (ms: ReturnType<typeof messagesFrom>) => T) =>
    owner.waitFor(room, since, (events) => match(messagesFrom(events, botId)) || undefined, what);
  const waitForPrompt = (room: string) =>
    owner.waitFor(
      room,
      since,
      (events) => {
        const prompt = messagesFrom(events, botId).find((m) =>
          String(m.body).startsWith('🔐 Permission needed'),
        );
        return prompt && reactionsTo(events, prompt.eventId).length === 3 ? prompt : undefined;
      },
      'a permission prompt with three reactions',
    );

  it('adopts an unencrypted DM the owner opened before the first start: prompts there, no second room', async () => {
    mkdirSync(join(workspace, 'build'));
    const dm = await owner.createRoom({ invite: [botId], direct: true });
    const { directRoom } = await start([shellCall('rm -rf build'), reply('Removed.')]);
    expect(directRoom).toBe(dm);
    expect(await owner.membership(dm, botId)).toBe('join');
    expect(await owner.stateEvent(dm, 'm.room.encryption')).toBeUndefined();
    expect((await bot.accountData('m.direct'))?.[base.owner]).toEqual([dm]);
    const stored = await db.query<{ value: string }>(
      "select value from matrix_state where account = $1 and key = 'direct_room'",
      [botId],
    );
    expect(stored.rows[0]?.value).toBe(dm);

    await owner.say(dm, 'delete the build folder');
    const prompt = await waitForPrompt(dm);
    expect(prompt.body).toContain('rm -rf build');
    await owner.react(dm, prompt.eventId, '✅');
    await waitForBot(dm, 'the final reply', (ms) => ms.find((m) => m.body === 'Removed.'));
    expect(existsSync(join(workspace, 'build'))).toBe(false);
    expect(currentContent(await owner.events(dm, since), prompt.eventId)?.body).toContain('✅ Approved once');
    // A turn in the private room gets no pointer to itself.
    const said = messagesFrom(await owner.events(dm, since), botId).map((m) => String(m.body));
    expect(said.filter((b) => b.startsWith('Waiting for the owner'))).toEqual([]);
    expect(await bot.joinedRooms()).toEqual([dm]);
  });

  it('adopts a DM opened while running; a shared room’s prompt goes there with a pointer', async () => {
    mkdirSync(join(workspace, 'build'));
    const first = await start([shellCall('rm -rf build'), reply('Removed.')]);
    await owner.join(first.directRoom);
    const dm = await owner.createRoom({ invite: [botId], direct: true });
    await owner.waitFor(
      dm,
      0,
      (events) => events.some((e) => e.sender === botId) || undefined,
      'the bot joining',
    );
    await expect
      .poll(async () => (await bot.accountData('m.direct'))?.[base.owner], { timeout: 30_000, interval: 150 })
      .toEqual([dm, first.directRoom]);
    // m.direct is written first, then the database, then the channel switches.
    await expect.poll(() => first.channel.ownerRoom?.(), { timeout: 10_000 }).toBe(dm);

    // A DM that is not direct-only (a stranger is invited too) is not adopted.
    const shared = await owner.createRoom({ invite: [botId, await stranger.userId()], direct: true });
    await owner.waitFor(
      shared,
      0,
      (events) => events.some((e) => e.sender === botId) || undefined,
      'the bot joining',
    );
    expect(first.channel.ownerRoom?.()).toBe(dm);

    await owner.say(shared, 'delete the build folder');
    const prompt = await waitForPrompt(dm);
    await waitForBot(shared, 'the pointer', (ms) =>
      ms.find((m) => String(m.body).startsWith('Waiting for the owner')),
    );
    await owner.react(dm, prompt.eventId, '✅');
    await waitForBot(shared, 'the final reply', (ms) => ms.find((m) => m.body === 'Removed.'));
    expect(existsSync(join(workspace, 'build'))).toBe(false);
    const inOld = messagesFrom(await owner.events(first.directRoom, since), botId);
    expect(inOld.filter((m) => String(m.body).startsWith('🔐'))).toEqual([]);
  });
});
