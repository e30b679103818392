// The Matrix channel's end-to-end encryption, kept in steward's database: the crypto store is
// claimed for this process, put back into the in-memory IndexedDB before the crypto opens it, and
// snapshotted after every call that changed it, before that call returns (so a key the bot used or
// a session it set up is never lost to a crash). matrix-bot-sdk's own storage provider class is
// the one it accepts; ours keeps the device id and room settings in the database instead of files.
import type { ICryptoRoomInformation, ICryptoStorageProvider } from 'matrix-bot-sdk';
import type { Logger } from '../../src/log.ts';
import type { Db } from '../../src/store/db.ts';
import { type ClaimedCryptoStore, claimCryptoStore } from './crypto-store.ts';
import { WASM_STORE_TYPE } from './crypto-wasm-adapter.ts';
import { done, restoreIndexedDb, snapshotIndexedDb } from './idb-snapshot.ts';
import type { CryptoStores, Sdk } from './load-sdk.ts';
import type { MatrixStateStore } from './state-store.ts';

export interface ChannelCrypto {
  provider: ICryptoStorageProvider;
  /** Bytes of the last snapshot written (for logs and doctor). */
  snapshotBytes(): number;
  /** Stops keeping the store (after the crypto is closed). */
  release(): void;
}

export async function channelCrypto(options: {
  sdk: Sdk;
  stores: CryptoStores;
  db: Db;
  state: MatrixStateStore;
  account: string;
  /** The access token's device. */
  deviceId: string | undefined;
  log: Logger;
}): Promise<ChannelCrypto> {
  const { sdk, stores, db, state, account, log } = options;
  const claimed: ClaimedCryptoStore = await claimCryptoStore(db, account, options.deviceId, (old) =>
    log.warn(
      { old, device: options.deviceId },
      'matrix: the access token is for a new device; its encryption keys start anew (verify the new device)',
    ),
  );
  const name = `steward:${account}`;
  let last: Buffer | null = claimed.snapshot;
  let chain: Promise<void> = Promise.resolve();
  const save = async () => {
    const snapshot = await snapshotIndexedDb(stores.indexedDb, name);
    if (last?.equals(snapshot)) return;
    await claimed.save(snapshot);
    last = snapshot;
  };
  const release = stores.register(name, {
    async restore() {
      // Whatever an earlier run in this process left in memory goes; the database is the truth.
      for (const d of await stores.indexedDb.databases())
        if (d.name?.startsWith(name)) await done(stores.indexedDb.deleteDatabase(d.name));
      if (claimed.snapshot) await restoreIndexedDb(stores.indexedDb, claimed.snapshot);
    },
    changed() {
      chain = chain.then(save, save);
      return chain;
    },
  });

  const roomKey = (room: string) => `crypto_room:${room}`;
  // matrix-bot-sdk accepts only its own provider class; this one has its prototype and our storage,
  // without its constructor (which would create a folder and a JSON file).
  const provider = Object.assign(Object.create(sdk.RustSdkCryptoStorageProvider.prototype) as object, {
    storagePath: name,
    storageType: WASM_STORE_TYPE,
    getDeviceId: async () => claimed.deviceId ?? (null as unknown as string),
    setDeviceId: async (id: string) => {
      await claimed.setDeviceId(id);
      claimed.deviceId = id;
    },
    getRoom: async (room: string) => {
      const raw = await state.get(roomKey(room));
      return (raw ? JSON.parse(raw) : undefined) as ICryptoRoomInformation;
    },
    storeRoom: (room: string, config: ICryptoRoomInformation) =>
      state.set(roomKey(room), JSON.stringify(config)),
  }) as ICryptoStorageProvider;

  return { provider, snapshotBytes: () => last?.length ?? 0, release };
}
