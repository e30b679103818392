// The owner as a real end-to-end-encrypting Matrix client in the test process: matrix-js-sdk
// (Element's SDK) with its Rust crypto, which runs on @matrix-org/matrix-sdk-crypto-wasm. Rooms
// are read through the plain client-server API and every event is decrypted by that client, so
// the test sees exactly what reached the homeserver and what the owner can read of it.
import { createDecipheriv, createHash } from 'node:crypto';
import * as sdk from 'matrix-js-sdk';
import { type Logger, logger } from 'matrix-js-sdk/lib/logger.js';
import { type MatrixHuman, matrixHuman, type RoomEvent } from './matrix-human.ts';

export interface DecryptedEvent extends RoomEvent {
  /** It travelled as m.room.encrypted. */
  wasEncrypted: boolean;
  /** It did, and this client could not decrypt it. */
  undecryptable: boolean;
}

export interface EncryptedFile {
  url: string;
  key: { k: string };
  iv: string;
  hashes: { sha256: string };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function e2eeOwner(homeserver: string, userId: string, token: string, deviceId: string) {
  const quiet = () => {};
  const silent: Logger = {
    trace: quiet,
    debug: quiet,
    info: quiet,
    warn: quiet,
    error: quiet,
    getChild: () => silent,
  };
  const verbose = process.env.STEWARD_TEST_LOG !== undefined;
  // The SDK's models log through its global logger (a loglevel logger) too.
  if (!verbose) (logger as unknown as { setLevel(level: 'silent'): void }).setLevel('silent');
  const client = sdk.createClient({
    baseUrl: homeserver,
    accessToken: token,
    userId,
    deviceId,
    ...(verbose ? {} : { logger: silent }),
  });
  await client.initRustCrypto({ useIndexedDB: false });
  const prepared = new Promise<void>((resolve) =>
    client.on(sdk.ClientEvent.Sync, (state) => {
      if (state === 'PREPARED') resolve();
    }),
  );
  await client.startClient({ initialSyncLimit: 10 });
  await prepared;
  const raw: MatrixHuman = matrixHuman(homeserver, token);

  const decrypt = async (event: RoomEvent & { room_id?: string }): Promise<DecryptedEvent> => {
    if (event.type !== 'm.room.encrypted') return { ...event, wasEncrypted: false, undecryptable: false };
    const e = new sdk.MatrixEvent(event as never);
    await client.decryptEventIfNeeded(e);
    return {
      ...event,
      type: e.getType(),
      content: e.getOriginalContent() as RoomEvent['content'],
      wasEncrypted: true,
      undecryptable: e.isDecryptionFailure(),
    };
  };
  const events = async (room: string, sinceTs = 0) =>
    Promise.all((await raw.events(room, sinceTs)).map(decrypt));

  return {
    client,
    raw,
    /** As Element opens a direct chat: trusted_private_chat, is_direct, encrypted from the start. */
    async openEncryptedDm(bot: string): Promise<string> {
      const { room_id } = await client.createRoom({
        preset: sdk.Preset.TrustedPrivateChat,
        is_direct: true,
        invite: [bot],
        initial_state: [
          { type: 'm.room.encryption', state_key: '', content: { algorithm: 'm.megolm.v1.aes-sha2' } },
        ],
      });
      await client.setAccountData(sdk.EventType.Direct, { [bot]: [room_id] });
      return room_id;
    },
    async say(room: string, text: string): Promise<string> {
      return (await client.sendTextMessage(room, text)).event_id;
    },
    /** As Element reacts: matrix-js-sdk sends m.reaction in clear, even in an encrypted room. */
    async react(room: string, eventId: string, key: string): Promise<string> {
      const sent = await client.sendEvent(room, sdk.EventType.Reaction, {
        'm.relates_to': { rel_type: sdk.RelationType.Annotation, event_id: eventId, key },
      } as never);
      return sent.event_id;
    },
    events,
    async waitFor<T>(
      room: string,
      sinceTs: number,
      match: (events: DecryptedEvent[]) => T | undefined,
      what: string,
      timeoutMs = 30_000,
    ): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      let last: DecryptedEvent[] = [];
      while (Date.now() < deadline) {
        last = await events(room, sinceTs);
        const found = match(last);
        if (found !== undefined) return found;
        await sleep(200);
      }
      throw new Error(
        `timed out waiting for ${what}; saw:\n${last.map((e) => `${e.sender} ${e.type}${e.wasEncrypted ? ' (encrypted)' : ''} ${JSON.stringify(e.content).slice(0, 160)}`).join('\n')}`,
      );
    },
    /** Downloads an encrypted attachment and decrypts it (AES-256-CTR, SHA-256 checked), as clients do. */
    async downloadEncrypted(file: EncryptedFile): Promise<Buffer> {
      const [server, id] = file.url.replace('mxc://', '').split('/');
      const response = await fetch(`${homeserver}/_matrix/client/v1/media/download/${server}/${id}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      if (!response.ok) throw new Error(`download ${file.url}: HTTP ${response.status}`);
      const ciphertext = Buffer.from(await response.arrayBuffer());
      const hash = createHash('sha256').update(ciphertext).digest('base64').replace(/=+$/, '');
      if (hash !== file.hashes.sha256) throw new Error('attachment hash mismatch');
      const key = Buffer.from(file.key.k, 'base64url');
      const iv = Buffer.from(file.iv, 'base64');
      const decipher = createDecipheriv('aes-256-ctr', key, iv);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    },
    /** The Ed25519 keys of `user`'s devices, as this client's crypto knows them. */
    async deviceKeys(user: string): Promise<Record<string, string | undefined>> {
      const map = await (
        client.getCrypto() as NonNullable<ReturnType<typeof client.getCrypto>>
      ).getUserDeviceInfo([user], true);
      return Object.fromEntries(
        [...(map.get(user) ?? new Map()).entries()].map(([id, d]) => [id, d.getFingerprint()]),
      );
    },
    stop() {
      client.stopClient();
    },
  };
}

export type E2eeOwner = Awaited<ReturnType<typeof e2eeOwner>>;
