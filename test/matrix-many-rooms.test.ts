// Many rooms joined at once, with end-to-end encryption on: the owner joins the encrypted direct
// room and opens eight unencrypted group rooms, the bot joins them all, and a message in the last
// one is answered at once. The SDK's E2EE tracking used to take each member event under the lock
// every sync batch waits for, each able to wait 5 s on a key query not yet sent, so messages sat
// unread: 15 s after the owner joined the direct room, 75-100 s in the fault suite's 20 rooms.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkNeeds } from '../adapters/matrix/matrix-channel.ts';
import type { Db } from '../src/store/db.ts';
import { botAccountToken } from './support/matrix-accounts.ts';
import { type MatrixHuman, matrixHuman, messagesFrom } from './support/matrix-human.ts';
import { openStewardDb, type RunningSteward, startSteward } from './support/matrix-steward.ts';
import { reply, type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { type MatrixEnv, matrixEnv, tempDir } from './support/services.ts';

const env = matrixEnv();
const ROOMS = 8;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('which events the SDK’s own E2EE listeners get', () => {
  const yes = async () => true;
  const no = async () => false;
  it.each([
    ['room.event', 'm.room.member', no, false],
    ['room.event', 'm.room.member', yes, true],
    ['room.event', 'm.room.encryption', no, true],
    ['room.event', 'm.room.message', no, true],
    ['room.join', undefined, no, true],
    ['room.message', 'm.room.message', yes, false],
    ['room.invite', 'm.room.member', yes, false],
  ] as const)('%s %s (encrypted room: %s) → %s', async (type, eventType, encrypted, expected) => {
    expect(await sdkNeeds(type, eventType ? { type: eventType } : undefined, encrypted)).toBe(expected);
  });
});

describe.skipIf(!env)('Matrix with many rooms joined at once (E2EE on)', () => {
  const base = env ?? ({} as MatrixEnv);
  let owner: MatrixHuman;
  let model: ScriptedModel;
  let dir: ReturnType<typeof tempDir>;
  let db: Db;
  let steward: RunningSteward | undefined;

  beforeAll(async () => {
    // A bot of its own: its one device starts with fresh keys in this fresh database.
    const tag = randomUUID().slice(0, 8);
    const botToken = await botAccountToken(base.homeserver, `steward-rooms-${tag}`, 'STEWARD_ROOMS');
    owner = matrixHuman(base.homeserver, base.ownerToken);
    dir = tempDir('steward-matrix-rooms-');
    mkdirSync(join(dir.path, 'workspace'));
    db = await openStewardDb(dir.path);
    model = await startScriptedModel([reply('Answered in the last room.')]);
    steward = await startSteward({ ...base, botToken }, model, db, join(dir.path, 'workspace'), {
      encryption: true,
    });
  }, 60_000);
  afterAll(async () => {
    await steward?.stop();
    await model?.close();
    await db?.close();
    dir?.remove();
  });

  it('joins the direct room and eight more, and answers in the last within seconds', async () => {
    const bot = steward?.botId ?? '';
    const began = Date.now();
    // The owner joining the encrypted direct room: member events the SDK tracks for E2EE.
    await owner.join(steward?.directRoom ?? '');
    const rooms: string[] = [];
    for (let i = 0; i < ROOMS; i++) rooms.push(await owner.createRoom({ invite: [bot] }));
    for (const room of rooms) {
      for (let i = 0; i < 600 && (await owner.membership(room, bot)) !== 'join'; i++) await sleep(100);
      expect(await owner.membership(room, bot)).toBe('join');
    }
    const last = rooms.at(-1) as string;
    const sent = Date.now();
    await owner.say(last, 'are you there?');
    await owner.waitFor(
      last,
      sent - 1000,
      (events) =>
        messagesFrom(events, bot).some((m) => m.body === 'Answered in the last room.') ? true : undefined,
      'the answer in the last room',
      60_000,
    );
    // Before, the direct room's join alone held the next batches 15 s, and each unencrypted room
    // joined up to 5 s more; now it is the joins and the turn, a few seconds on a loaded machine.
    expect(Date.now() - began).toBeLessThan(12_000);
  }, 90_000);
});
