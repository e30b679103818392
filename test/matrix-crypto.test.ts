// The pieces of Matrix E2EE that need no homeserver: when a message may go into a room, which
// clear events count in an encrypted room, the crypto-wasm adapter under matrix-bot-sdk's calls,
// the IndexedDB snapshot surviving a "new process", and one process owning the key store.
import { createRequire } from 'node:module';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeText } from '../adapters/matrix/check-e2ee.ts';
import {
  CryptoStoreTakenError,
  claimCryptoStore,
  cryptoStoreStatus,
} from '../adapters/matrix/crypto-store.ts';
import { type CryptoWasm, cryptoNodejsApi } from '../adapters/matrix/crypto-wasm-adapter.ts';
import { done, restoreIndexedDb, snapshotIndexedDb } from '../adapters/matrix/idb-snapshot.ts';
import { clearEventPolicy } from '../adapters/matrix/inbound.ts';
import { installIndexedDb } from '../adapters/matrix/indexeddb-globals.ts';
import { sendMode } from '../adapters/matrix/matrix-ops.ts';
import type { Db } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/open-db.ts';
import { tempDir } from './support/services.ts';

describe('sendMode: never a message in clear into an encrypted room', () => {
  it.each([
    [{ encrypted: false, cryptoOn: false, sdkEncrypts: false }, 'clear'],
    [{ encrypted: false, cryptoOn: true, sdkEncrypts: false }, 'clear'],
    [{ encrypted: false, cryptoOn: true, sdkEncrypts: true }, 'encrypted'],
    [{ encrypted: true, cryptoOn: true, sdkEncrypts: true }, 'encrypted'],
    // The SDK's tracker treats a failed state lookup as "unencrypted": refused, not sent in clear.
    [{ encrypted: true, cryptoOn: true, sdkEncrypts: false }, 'refuse'],
    [{ encrypted: true, cryptoOn: false, sdkEncrypts: false }, 'refuse'],
    [{ encrypted: true, cryptoOn: false, sdkEncrypts: true }, 'refuse'],
  ] as const)('%o → %s', (room, mode) => {
    expect(sendMode(room)).toBe(mode);
  });
});

describe('clearEventPolicy: what counts in an encrypted room', () => {
  it.each([
    ['a decrypted message', { type: 'm.room.message', roomEncrypted: true, decrypted: true }, 'accept'],
    [
      'a message in an unencrypted room',
      { type: 'm.room.message', roomEncrypted: false, decrypted: false },
      'accept',
    ],
    // Only a homeserver forging the owner could put a clear message into an encrypted room.
    [
      'a clear message in an encrypted room',
      { type: 'm.room.message', roomEncrypted: true, decrypted: false },
      'ignore',
    ],
    [
      'a clear reaction (as Element sends them)',
      { type: 'm.reaction', roomEncrypted: true, decrypted: false },
      'accept',
    ],
    [
      'an undecryptable event (gets a notice)',
      { type: 'm.room.encrypted', roomEncrypted: true, decrypted: false },
      'accept',
    ],
    ['any other clear type', { type: 'm.sticker', roomEncrypted: true, decrypted: false }, 'ignore'],
  ] as const)('%s', (_name, event, verdict) => {
    expect(clearEventPolicy(event)).toBe(verdict);
  });
});

describe('storeText', () => {
  const at = new Date('2026-01-02T03:04:05Z');
  it.each([
    [[], 'no keys stored yet (made at the first start)'],
    [
      new Error('relation "matrix_crypto_store" does not exist'),
      'key store not readable: relation "matrix_crypto_store" does not exist',
    ],
    [
      [{ account: '@b:x', deviceId: 'D1', bytes: 20_000, updatedAt: at }],
      'keys of @b:x device D1 stored (20 KiB, saved 2026-01-02T03:04:05.000Z)',
    ],
    [[{ account: '@b:x', deviceId: null, bytes: 0, updatedAt: at }], 'keys of @b:x not stored yet'],
  ])('%o', (rows, text) => {
    expect(storeText(rows)).toBe(text);
  });
});

describe('the crypto-nodejs API over crypto-wasm', () => {
  const wasm = createRequire(import.meta.url)('@matrix-org/matrix-sdk-crypto-wasm') as CryptoWasm;
  const factory = installIndexedDb();
  let name = '';
  let saved: Buffer | undefined;
  const writes: string[] = [];
  const api = cryptoNodejsApi(wasm, {
    async restore() {
      if (saved) await restoreIndexedDb(factory, saved);
    },
    async changed(store) {
      writes.push(store);
      saved = await snapshotIndexedDb(factory, store);
    },
  });
  const forget = async () => {
    for (const d of await factory.databases())
      if (d.name?.startsWith(name)) await done(factory.deleteDatabase(d.name));
  };

  beforeEach(() => {
    name = `steward-test:${Math.random()}`;
    saved = undefined;
  });

  it('runs matrix-bot-sdk’s calls, snapshots after each, and comes back with the same keys', async () => {
    const user = new api.UserId('@bot:example.org');
    const machine = await api.OlmMachine.initialize(
      user,
      new api.DeviceId('DEV1'),
      name,
      '',
      api.StoreType.Sqlite,
    );
    const ed25519 = machine.identityKeys.ed25519.toBase64();
    expect(writes.length).toBeGreaterThan(0);

    const requests = await machine.outgoingRequests();
    const upload = requests.find((r) => r.type === wasm.RequestType.KeysUpload);
    expect(JSON.parse(upload?.body ?? '{}').device_keys.device_id).toBe('DEV1');
    // matrix-bot-sdk passes one array to three calls: plain ids survive that.
    const members = [new api.UserId('@owner:example.org'), user];
    await machine.updateTrackedUsers(members);
    await machine.updateTrackedUsers(members);
    expect(await machine.getMissingSessions(members)).toBeNull();
    const synced = await machine.receiveSyncChanges(
      '[]',
      new api.DeviceLists(members, []),
      { signed_curve25519: 0 },
      [],
    );
    expect(JSON.parse(synced)).toEqual([]);
    const signatures = await machine.sign(JSON.stringify({ a: 1 }));
    const mine = signatures.get(user) as Record<string, { isValid: boolean }>;
    expect(Object.keys(mine)).toEqual(['ed25519:DEV1']);
    expect(Object.values(mine)[0]?.isValid).toBe(true);

    // A file through the adapter's Attachment decrypts back.
    const encrypted = api.Attachment.encrypt(Buffer.from('secret file'));
    const info = JSON.parse(encrypted.mediaEncryptionInfo ?? '{}') as { key: { k: string } };
    expect(info.key.k).toBeTruthy();
    const back = api.Attachment.decrypt(
      new api.EncryptedAttachment(encrypted.encryptedData, JSON.stringify(info)),
    );
    expect(Buffer.from(back).toString()).toBe('secret file');

    // A "new process": the memory is gone, only the snapshot is left.
    machine.close();
    await forget();
    expect((await factory.databases()).filter((d) => d.name?.startsWith(name))).toEqual([]);
    const again = await api.OlmMachine.initialize(
      user,
      new api.DeviceId('DEV1'),
      name,
      '',
      api.StoreType.Sqlite,
    );
    expect(again.identityKeys.ed25519.toBase64()).toBe(ed25519);
    // The tracked users came back too: no keys query is needed for them again from scratch.
    const pending = await again.outgoingRequests();
    expect(
      pending.every((r) => r.type !== wasm.RequestType.KeysUpload || r.body.includes('one_time_keys')),
    ).toBe(true);
    again.close();
    await forget();
  });

  it('without a snapshot, a fresh store makes different keys', async () => {
    saved = undefined;
    const a = await api.OlmMachine.initialize(
      new api.UserId('@bot:x'),
      new api.DeviceId('DEV2'),
      name,
      '',
      '',
    );
    const first = a.identityKeys.ed25519.toBase64();
    a.close();
    await forget();
    saved = undefined;
    const b = await api.OlmMachine.initialize(
      new api.UserId('@bot:x'),
      new api.DeviceId('DEV2'),
      name,
      '',
      '',
    );
    expect(b.identityKeys.ed25519.toBase64()).not.toBe(first);
    b.close();
    await forget();
  });
});

describe('claimCryptoStore: one process owns the keys', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Db;
  beforeEach(async () => {
    dir = tempDir('steward-crypto-store-');
    db = await openPglite(`${dir.path}/pg`);
    await migrate(db);
  });
  afterEach(async () => {
    await db.close();
    dir.remove();
  });

  it('a later claim takes over; the earlier holder can no longer write', async () => {
    const first = await claimCryptoStore(db, '@bot:x', 'DEV');
    await first.setDeviceId('DEV');
    await first.save(Buffer.from('one'));
    const second = await claimCryptoStore(db, '@bot:x', 'DEV');
    expect(second.deviceId).toBe('DEV');
    expect(second.snapshot?.toString()).toBe('one');
    await expect(first.save(Buffer.from('stale'))).rejects.toBeInstanceOf(CryptoStoreTakenError);
    await second.save(Buffer.from('two'));
    expect((await claimCryptoStore(db, '@bot:x', 'DEV')).snapshot?.toString()).toBe('two');
    expect(await cryptoStoreStatus(db)).toMatchObject([{ account: '@bot:x', deviceId: 'DEV', bytes: 3 }]);
  });

  it('a token for another device drops the old keys, and says so', async () => {
    const first = await claimCryptoStore(db, '@bot:x', 'OLD');
    await first.setDeviceId('OLD');
    await first.save(Buffer.from('old keys'));
    const dropped: string[] = [];
    const next = await claimCryptoStore(db, '@bot:x', 'NEW', (old) => dropped.push(old));
    expect(dropped).toEqual(['OLD']);
    expect(next.deviceId).toBeNull();
    expect(next.snapshot).toBeNull();
  });

  it('accounts are apart', async () => {
    const a = await claimCryptoStore(db, '@a:x', 'D');
    await a.save(Buffer.from('a'));
    await claimCryptoStore(db, '@b:x', 'D');
    await a.save(Buffer.from('a2'));
    expect((await claimCryptoStore(db, '@a:x', 'D')).snapshot?.toString()).toBe('a2');
  });
});
