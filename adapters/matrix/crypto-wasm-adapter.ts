// @matrix-org/matrix-sdk-crypto-wasm presented under the @matrix-org/matrix-sdk-crypto-nodejs API
// that matrix-bot-sdk 0.8.0's CryptoClient and RustEngine call, so that code runs unchanged with the
// same Rust crypto and no native binary to download. Only what the SDK uses is bridged:
// - `initialize` takes a store name (IndexedDB), not a path and a store type;
// - `receiveSyncChanges` takes a Map/Set and DecryptionSettings and returns objects, not JSON;
// - `decryptRoomEvent` needs DecryptionSettings;
// - to-device requests have snake_case fields; the SDK reads txnId/eventType and a body with them;
// - `sharingStrategy` replaces `onlyAllowTrustedDevices`;
// - `Signatures.get` returns a Map where the SDK expects a plain object, and `isValid` is a method
//   there where the SDK reads a property (a function is always truthy: every signature would pass);
// - WASM takes ownership of the UserId objects passed in an array (the SDK passes one array to three
//   calls), so ids here are plain strings and fresh WASM objects are built for every call.
// Every call that may change the store is followed by `hooks.changed`, awaited before it returns,
// so the caller (the snapshot into steward's database) sees each write before the SDK goes on.
import type * as Wasm from '@matrix-org/matrix-sdk-crypto-wasm';

export type CryptoWasm = typeof Wasm;

export interface StoreHooks {
  /** Before the machine opens store `name`: put its saved contents back. */
  restore(name: string): Promise<void>;
  /** After a call that may have written to store `name`, before that call returns. */
  changed(name: string): Promise<void>;
}

/** The store type the SDK passes through unread; our storage provider hands this one out. */
export const WASM_STORE_TYPE = 'indexeddb';

class Id {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString() {
    return this.value;
  }
}

/** Room keys go to every device of the room's members (matrix-bot-sdk's only strategy). */
class EncryptionSettings {
  algorithm = 1;
  historyVisibility = 1;
  rotationPeriod = 604_800_000_000n;
  rotationPeriodMessages = 100n;
}

class DeviceLists {
  readonly changed: Id[];
  readonly left: Id[];
  constructor(changed: Id[] = [], left: Id[] = []) {
    this.changed = changed;
    this.left = left;
  }
}

interface BotRequest {
  id: string;
  type: number;
  body: string;
}

export function cryptoNodejsApi(wasm: CryptoWasm, hooks: StoreHooks) {
  const user = (id: Id | string) => new wasm.UserId(String(id));
  const users = (ids: Array<Id | string>) => ids.map(user);
  const settings = () => new wasm.DecryptionSettings(wasm.TrustRequirement.Untrusted);

  /** A to-device request as the SDK reads it: txnId/eventType, and txn_id/event_type in the body. */
  const toDevice = (r: Wasm.ToDeviceRequest) => {
    const body = JSON.parse(r.body) as Record<string, unknown>;
    return {
      id: r.id,
      type: r.type,
      txnId: r.txn_id,
      eventType: r.event_type,
      body: JSON.stringify({ ...body, txn_id: r.txn_id, event_type: r.event_type }),
    };
  };
  const request = (r: Wasm.OutgoingRequest): BotRequest =>
    r instanceof wasm.ToDeviceRequest ? toDevice(r) : { id: String(r.id), type: r.type, body: r.body };

  class OlmMachine {
    private readonly machine: Wasm.OlmMachine;
    private readonly store: string;
    private constructor(machine: Wasm.OlmMachine, store: string) {
      this.machine = machine;
      this.store = store;
    }

    /** As matrix-bot-sdk calls it; the passphrase and store type of the native library mean nothing here. */
    static async initialize(
      userId: Id,
      deviceId: Id,
      storePath: string,
      _passphrase?: string,
      _storeType?: unknown,
    ): Promise<OlmMachine> {
      await hooks.restore(storePath);
      const machine = await wasm.OlmMachine.initialize(
        user(userId),
        new wasm.DeviceId(String(deviceId)),
        storePath,
      );
      await hooks.changed(storePath);
      return new OlmMachine(machine, storePath);
    }

    private async write<T>(work: Promise<T>): Promise<T> {
      const result = await work;
      await hooks.changed(this.store);
      return result;
    }

    get identityKeys() {
      return this.machine.identityKeys;
    }
    get deviceId() {
      return this.machine.deviceId;
    }
    async outgoingRequests(): Promise<BotRequest[]> {
      return (await this.write(this.machine.outgoingRequests())).map(request);
    }
    markRequestAsSent(id: string, type: number, response: string) {
      return this.write(this.machine.markRequestAsSent(id, type, response));
    }
    updateTrackedUsers(ids: Id[]) {
      return this.write(this.machine.updateTrackedUsers(users(ids)));
    }
    async getMissingSessions(ids: Id[]): Promise<BotRequest | null> {
      const claim = await this.write(this.machine.getMissingSessions(users(ids)));
      return claim ? request(claim) : null;
    }
    async receiveSyncChanges(
      toDevice: string,
      lists: DeviceLists,
      counts: Record<string, number>,
      fallbackAlgorithms: string[],
    ): Promise<string> {
      const processed = await this.write(
        this.machine.receiveSyncChanges(
          toDevice,
          new wasm.DeviceLists(users(lists.changed), users(lists.left)),
          new Map(Object.entries(counts)),
          new Set(fallbackAlgorithms),
          settings(),
        ),
      );
      const decrypted = processed.filter((e) => e instanceof wasm.DecryptedToDeviceEvent);
      return JSON.stringify(decrypted.map((e) => JSON.parse(e.rawEvent) as unknown));
    }
    async shareRoomKey(
      roomId: Id,
      ids: Id[],
      options: EncryptionSettings,
    ): Promise<ReturnType<typeof toDevice>[]> {
      const s = new wasm.EncryptionSettings();
      s.algorithm = options.algorithm as Wasm.EncryptionAlgorithm;
      s.historyVisibility = options.historyVisibility as Wasm.HistoryVisibility;
      s.rotationPeriod = options.rotationPeriod;
      s.rotationPeriodMessages = options.rotationPeriodMessages;
      s.sharingStrategy = wasm.CollectStrategy.allDevices();
      const requests = await this.write(
        this.machine.shareRoomKey(new wasm.RoomId(String(roomId)), users(ids), s),
      );
      return requests.map(toDevice);
    }
    encryptRoomEvent(roomId: Id, type: string, content: string): Promise<string> {
      return this.write(this.machine.encryptRoomEvent(new wasm.RoomId(String(roomId)), type, content));
    }
    async decryptRoomEvent(event: string, roomId: Id): Promise<{ event: string }> {
      const decrypted = await this.write(
        this.machine.decryptRoomEvent(event, new wasm.RoomId(String(roomId)), settings()),
      );
      return { event: decrypted.event };
    }
    async sign(message: string) {
      const signatures = await this.machine.sign(message);
      return {
        get: (signer: Id) =>
          Object.fromEntries(
            [...(signatures.get(user(signer)) ?? new Map<string, Wasm.MaybeSignature>())].map(([key, s]) => [
              key,
              { isValid: s.isValid(), signature: s.signature },
            ]),
          ),
      };
    }
    close() {
      this.machine.close();
    }
  }

  class EncryptedAttachment {
    readonly data: Uint8Array;
    readonly info: string;
    constructor(data: Uint8Array, info: string) {
      this.data = data;
      this.info = info;
    }
  }
  const Attachment = {
    encrypt(data: Uint8Array) {
      const encrypted = wasm.Attachment.encrypt(data);
      return { encryptedData: encrypted.encryptedData, mediaEncryptionInfo: encrypted.mediaEncryptionInfo };
    },
    decrypt(attachment: EncryptedAttachment) {
      return wasm.Attachment.decrypt(new wasm.EncryptedAttachment(attachment.data, attachment.info));
    },
  };

  return {
    OlmMachine,
    UserId: Id,
    DeviceId: Id,
    RoomId: Id,
    DeviceLists,
    EncryptionSettings,
    Attachment,
    EncryptedAttachment,
    StoreType: { Sqlite: WASM_STORE_TYPE, Sled: WASM_STORE_TYPE },
    RequestType: wasm.RequestType,
  };
}
