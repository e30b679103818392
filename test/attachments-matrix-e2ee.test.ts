// A file in an end-to-end encrypted room: the owner is a real E2EE client (matrix-js-sdk, Rust
// crypto) that encrypts the attachment as clients do (AES-256-CTR, SHA-256 of the ciphertext) and
// sends the m.file event megolm-encrypted; steward runs as a child process with encryption on. The
// bot decrypts the event, fetches the ciphertext through authenticated media, checks and decrypts
// it, and the model gets the text fenced with the file name.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createCipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closings, FORGED, lastUserMessage } from './support/attachment-fixtures.ts';
import { botAccountToken } from './support/matrix-accounts.ts';
import { type E2eeOwner, e2eeOwner } from './support/matrix-e2ee-owner.ts';
import { messagesFrom } from './support/matrix-human.ts';
import { reply, type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { freshPostgres, type MatrixEnv, matrixEnv, postgresUrl, tempDir } from './support/services.ts';

const env = matrixEnv();
const admin = postgresUrl();
const CHILD = join(import.meta.dirname, 'support/matrix-child.ts');

function startChild(config: unknown): Promise<ChildProcessWithoutNullStreams> {
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
      if (/^READY /m.test(stdout)) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`steward exited (${code ?? signal}) before it was ready:\n${stderr}`));
    });
  });
}

describe.skipIf(!env || !admin)('an encrypted attachment in an encrypted room', () => {
  const base = env ?? ({} as MatrixEnv);
  let owner: E2eeOwner;
  let model: ScriptedModel;
  let database: { url: string; drop(): Promise<void> };
  let dir: ReturnType<typeof tempDir>;
  let child: ChildProcessWithoutNullStreams | undefined;
  let botEnv: MatrixEnv;

  beforeAll(async () => {
    const tag = randomUUID().slice(0, 8);
    const ownerToken = await botAccountToken(base.homeserver, `files-owner-${tag}`, 'OWNER_FILES');
    const whoami = (await (
      await fetch(`${base.homeserver}/_matrix/client/v3/account/whoami`, {
        headers: { authorization: `Bearer ${ownerToken}` },
      })
    ).json()) as { user_id: string };
    botEnv = {
      ...base,
      owner: whoami.user_id,
      ownerToken,
      botToken: await botAccountToken(base.homeserver, `steward-files-${tag}`, 'STEWARD_FILES'),
    };
    owner = await e2eeOwner(base.homeserver, whoami.user_id, ownerToken, 'OWNER_FILES');
    database = await freshPostgres(admin as string);
    dir = tempDir('steward-attach-e2ee-');
    mkdirSync(join(dir.path, 'workspace'));
    model = await startScriptedModel([reply('Read your encrypted file.')]);
  }, 60_000);
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.on('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    owner?.stop();
    await model?.close();
    await database?.drop();
    dir?.remove();
  });

  it('decrypts the event and the file, and fences the text with the file name', async () => {
    const since = Date.now();
    const bot = (await (
      await fetch(`${base.homeserver}/_matrix/client/v3/account/whoami`, {
        headers: { authorization: `Bearer ${botEnv.botToken}` },
      })
    ).json()) as { user_id: string };
    const dm = await owner.openEncryptedDm(bot.user_id);
    child = await startChild({
      env: botEnv,
      modelUrl: model.baseUrl,
      dbUrl: database.url,
      workspace: join(dir.path, 'workspace'),
    });
    await owner.waitFor(
      dm,
      since,
      (e) => e.some((x) => x.sender === bot.user_id) || undefined,
      'the bot joining',
    );

    // As a client encrypts an attachment: a random key and IV, the SHA-256 of the ciphertext.
    const plain = Buffer.from(`Board minutes, confidential\n${FORGED}\nvote on friday\n`);
    const key = randomBytes(32);
    const iv = Buffer.concat([randomBytes(8), Buffer.alloc(8)]);
    const cipher = createCipheriv('aes-256-ctr', key, iv);
    const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
    const uploaded = await fetch(`${base.homeserver}/_matrix/media/v3/upload?filename=minutes.txt`, {
      method: 'POST',
      headers: { authorization: `Bearer ${botEnv.ownerToken}`, 'content-type': 'application/octet-stream' },
      body: ciphertext,
    });
    const url = ((await uploaded.json()) as { content_uri: string }).content_uri;
    const unpadded = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
    await owner.client.sendMessage(dm, {
      msgtype: 'm.file',
      body: 'minutes.txt',
      info: { mimetype: 'text/plain', size: plain.length },
      file: {
        v: 'v2',
        url,
        iv: unpadded(iv),
        hashes: { sha256: unpadded(createHash('sha256').update(ciphertext).digest()) },
        key: {
          kty: 'oct',
          alg: 'A256CTR',
          ext: true,
          key_ops: ['encrypt', 'decrypt'],
          k: key.toString('base64url'),
        },
      },
    } as never);

    const answer = await owner.waitFor(
      dm,
      since,
      (events) => messagesFrom(events, bot.user_id).find((m) => m.body === 'Read your encrypted file.'),
      'the answer',
      60_000,
    );
    expect(answer).toBeDefined();
    const sent = lastUserMessage(model.requests.at(-1) as Record<string, unknown>);
    expect(sent.text).toContain('<untrusted_content source="minutes.txt" trust="data">');
    expect(sent.text).toContain('vote on friday');
    expect(sent.text).toContain('[fenced-marker removed]');
    expect(closings(sent.text)).toBe(1);
    // The owner's event travelled encrypted: the homeserver saw no file key in clear.
    const raw = await owner.raw.events(dm, since);
    const fileEvents = raw.filter((e) => e.sender === botEnv.owner && e.type === 'm.room.message');
    expect(fileEvents).toEqual([]);
  }, 120_000);
});
