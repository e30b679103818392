// End-to-end encryption against the real Synapse, with the owner as a real E2EE client
// (matrix-js-sdk with its Rust crypto on crypto-wasm, in this process) and steward as a real child
// process on PostgreSQL that is SIGKILLed and started again. The owner opens an encrypted DM as
// Element does; everything the bot says there is encrypted and decrypts; prompts, a clear ✅,
// an encrypted file; after the kill the same device keys decrypt and answer, nothing twice.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cryptoStoreStatus } from '../adapters/matrix/crypto-store.ts';
import { openPostgres } from '../src/store/open-db.ts';
import { botAccountToken } from './support/matrix-accounts.ts';
import {
  type DecryptedEvent,
  type E2eeOwner,
  type EncryptedFile,
  e2eeOwner,
} from './support/matrix-e2ee-owner.ts';
import { messagesFrom, reactionsTo } from './support/matrix-human.ts';
import { reply, type ScriptedModel, type ScriptStep, startScriptedModel } from './support/scripted-model.ts';
import { freshPostgres, type MatrixEnv, matrixEnv, postgresUrl, tempDir } from './support/services.ts';

const env = matrixEnv();
const admin = postgresUrl();
const CHILD = join(import.meta.dirname, 'support/matrix-child.ts');
const shellCall = (command: string, id: string): ScriptStep => ({
  chunks: [],
  toolCalls: [{ id, name: 'shell', argumentChunks: [JSON.stringify({ command })] }],
});

interface Ready {
  directRoom: string;
  botId: string;
  device: { id: string; ed25519: string };
}

function startChild(config: unknown): Promise<{ child: ChildProcessWithoutNullStreams; ready: Ready }> {
  const child = spawn(process.execPath, [CHILD, JSON.stringify(config)], { env: process.env });
  let stdout = '';
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`steward did not start:\n${stderr}`)), 60_000);
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = /^READY (.*)$/m.exec(stdout);
      if (line?.[1]) {
        clearTimeout(timer);
        resolve({ child, ready: JSON.parse(line[1]) as Ready });
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`steward exited (${code ?? signal}) before it was ready:\n${stderr}`));
    });
  });
}

const killed = (child: ChildProcessWithoutNullStreams) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.on('exit', () => resolve());
    child.kill('SIGKILL');
  });

describe.skipIf(!env || !admin)('Matrix end-to-end encryption, with a real E2EE owner and a SIGKILL', () => {
  const base = env ?? ({} as MatrixEnv);
  let owner: E2eeOwner;
  let botEnv: MatrixEnv;
  let model: ScriptedModel;
  let database: { url: string; drop(): Promise<void> };
  let dir: ReturnType<typeof tempDir>;
  let running: ChildProcessWithoutNullStreams | undefined;

  beforeAll(async () => {
    const tag = randomUUID().slice(0, 8);
    const ownerUser = `e2ee-owner-${tag}`;
    const ownerToken = await botAccountToken(base.homeserver, ownerUser, 'OWNER_E2EE');
    const whoami = (await (
      await fetch(`${base.homeserver}/_matrix/client/v3/account/whoami`, {
        headers: { authorization: `Bearer ${ownerToken}` },
      })
    ).json()) as { user_id: string };
    botEnv = {
      ...base,
      owner: whoami.user_id,
      ownerToken,
      botToken: await botAccountToken(base.homeserver, `steward-e2ee-${tag}`, 'STEWARD_E2EE'),
    };
    owner = await e2eeOwner(base.homeserver, whoami.user_id, ownerToken, 'OWNER_E2EE');
    database = await freshPostgres(admin as string);
    dir = tempDir('steward-matrix-e2ee-');
    mkdirSync(join(dir.path, 'workspace'));
    model = await startScriptedModel([
      reply('Hello, encrypted owner!'),
      shellCall('rm -rf build', 'call_1'),
      reply('Removed.'),
      shellCall('seq 1 200000', 'call_2'),
      reply('Counted.'),
      reply('Still here after the crash.'),
    ]);
  }, 60_000);
  afterAll(async () => {
    if (running) await killed(running);
    owner?.stop();
    await model?.close();
    await database?.drop();
    dir?.remove();
  });

  it('talks encrypted in the owner’s DM, survives SIGKILL with the same keys, never in clear', async () => {
    const workspace = join(dir.path, 'workspace');
    mkdirSync(join(workspace, 'build'));
    const config = { env: botEnv, modelUrl: model.baseUrl, dbUrl: database.url, workspace };
    const since = Date.now();
    const bot = (await (
      await fetch(`${base.homeserver}/_matrix/client/v3/account/whoami`, {
        headers: { authorization: `Bearer ${botEnv.botToken}` },
      })
    ).json()) as { user_id: string };
    const dm = await owner.openEncryptedDm(bot.user_id);

    let started = await startChild(config);
    running = started.child;
    const first = started.ready;
    expect(first.directRoom).toBe(dm);
    // Adopted, not a room of its own: the DM is the only room the bot is in.
    const joined = (await (
      await fetch(`${base.homeserver}/_matrix/client/v3/joined_rooms`, {
        headers: { authorization: `Bearer ${botEnv.botToken}` },
      })
    ).json()) as { joined_rooms: string[] };
    expect(joined.joined_rooms).toEqual([dm]);
    expect(first.device.id).toBe('STEWARD_E2EE');
    const botSaid = (events: DecryptedEvent[]) => messagesFrom(events, bot.user_id);
    const waitForText = (text: string) =>
      owner.waitFor(dm, since, (events) => botSaid(events).find((m) => m.body === text), `"${text}"`);

    // Hello: the owner's message is encrypted; the bot reads it and its reply decrypts.
    await owner.waitFor(
      dm,
      since,
      (e) => e.some((x) => x.sender === bot.user_id) || undefined,
      'the bot joining',
    );
    await owner.say(dm, 'hello');
    await waitForText('Hello, encrypted owner!');
    expect(model.requests).toHaveLength(1);

    // A destructive call: the prompt is in this DM, encrypted; the owner's ✅ (sent in clear, as
    // Element does) runs it.
    await owner.say(dm, 'delete the build folder');
    const prompt = await owner.waitFor(
      dm,
      since,
      (events) => {
        const p = botSaid(events).find((m) => String(m.body).startsWith('🔐 Permission needed'));
        return p && reactionsTo(events, p.eventId).length === 3 ? p : undefined;
      },
      'the prompt with its reactions',
    );
    expect(prompt.body).toContain('rm -rf build');
    await owner.react(dm, prompt.eventId, '✅');
    await waitForText('Removed.');
    expect(existsSync(join(workspace, 'build'))).toBe(false);

    // A large output arrives as an encrypted file: `file`, not `url`, and it decrypts.
    await owner.say(dm, 'count to 200000');
    const file = await owner.waitFor(
      dm,
      since,
      (events) => botSaid(events).find((m) => m.msgtype === 'm.file'),
      'the file',
    );
    expect(file.url).toBeUndefined();
    const text = (await owner.downloadEncrypted(file.file as EncryptedFile)).toString('utf8');
    const numbers = text.split('\n').filter((line) => /^\d+$/.test(line));
    expect(numbers).toHaveLength(200_000);
    await waitForText('Counted.');

    // SIGKILL, a message while it is down, and a restart: the same device and keys, the message
    // decrypted and answered once.
    await killed(started.child);
    await owner.say(dm, 'are you there?');
    started = await startChild(config);
    running = started.child;
    expect(started.ready.device).toEqual(first.device);
    await waitForText('Still here after the crash.');
    expect(await owner.deviceKeys(bot.user_id)).toEqual({ [first.device.id]: first.device.ed25519 });

    // An event nobody can decrypt gets a notice saying what to do; nothing reaches the model.
    await owner.raw.sendEvent(dm, 'm.room.encrypted', {
      algorithm: 'm.megolm.v1.aes-sha2',
      ciphertext: 'AwgA',
      sender_key: 'k',
      session_id: 's',
      device_id: 'D',
    });
    const notice = await owner.waitFor(
      dm,
      since,
      (events) => botSaid(events).find((m) => String(m.body).includes('could not decrypt')),
      'the undecryptable notice',
    );
    expect(notice.body).toContain(first.device.id);
    await new Promise((r) => setTimeout(r, 1500));

    const events = await owner.events(dm, since);
    const texts = botSaid(events)
      .filter((m) => m.msgtype === 'm.text')
      .map((m) => m.body);
    for (const t of ['Hello, encrypted owner!', 'Removed.', 'Counted.', 'Still here after the crash.'])
      expect(texts.filter((x) => x === t)).toHaveLength(1);
    expect(model.requests).toHaveLength(6);
    // Not one event from the bot went into the room in clear, and the owner could decrypt them all.
    const fromBot = events.filter(
      (e) => e.sender === bot.user_id && (e as { state_key?: string }).state_key === undefined,
    );
    expect(fromBot.length).toBeGreaterThan(10);
    expect(fromBot.filter((e) => !e.wasEncrypted)).toEqual([]);
    expect(fromBot.filter((e) => e.undecryptable)).toEqual([]);

    // The keys are in steward's database, for this device.
    await killed(started.child);
    running = undefined;
    const db = await openPostgres(database.url);
    try {
      const [stored] = await cryptoStoreStatus(db);
      expect(stored).toMatchObject({ account: bot.user_id, deviceId: first.device.id });
      expect(stored?.bytes).toBeGreaterThan(10_000);
    } finally {
      await db.close();
    }
  }, 240_000);
});
