// Where the Matrix crypto keeps what must last, in steward's database: the snapshot of its
// IndexedDB (written after every change, before the change is acted on), the device id, and
// matrix-bot-sdk's per-room encryption settings. One process owns an account's store at a time.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/store/db.ts';

export class CryptoStoreTakenError extends Error {
  override name = 'CryptoStoreTakenError';
  /** The sync loop stops on it: this process must not go on with keys another one now owns. */
  readonly fatal = true;
}

export interface ClaimedCryptoStore {
  deviceId: string | null;
  snapshot: Buffer | null;
  /** Saves a new snapshot; throws CryptoStoreTakenError once another process has taken the store. */
  save(snapshot: Buffer): Promise<void>;
  setDeviceId(deviceId: string): Promise<void>;
}

/**
 * Takes the store of `account` over for this process. `deviceId` is the access token's device: a
 * store kept for another device (the bot was logged in again) is dropped, as its keys belong to
 * a device that is gone.
 */
export async function claimCryptoStore(
  db: Db,
  account: string,
  deviceId: string | undefined,
  onDropped: (oldDevice: string) => void = () => {},
): Promise<ClaimedCryptoStore> {
  const holder = randomUUID();
  const row = (
    await db.query<{ device_id: string | null; snapshot: Buffer | Uint8Array | null }>(
      `insert into matrix_crypto_store (account, holder) values ($1, $2)
       on conflict (account) do update set holder = excluded.holder, updated_at = now()
       returning device_id, snapshot`,
      [account, holder],
    )
  ).rows[0];
  let stored = row?.device_id ?? null;
  let snapshot = row?.snapshot ? Buffer.from(row.snapshot) : null;
  if (stored && deviceId && stored !== deviceId) {
    onDropped(stored);
    await db.query(
      'update matrix_crypto_store set device_id = null, snapshot = null, snapshot_bytes = 0 where account = $1',
      [account],
    );
    stored = null;
    snapshot = null;
  }
  const owned = async (sql: string, params: unknown[]) => {
    const r = await db.query(`${sql} where account = $1 and holder = $2 returning account`, [
      account,
      holder,
      ...params,
    ]);
    if (r.rows.length !== 1)
      throw new CryptoStoreTakenError(
        `another steward took over the encryption keys of ${account}; this one stops using them`,
      );
  };
  return {
    deviceId: stored,
    snapshot,
    save: (data) =>
      owned('update matrix_crypto_store set snapshot = $3, snapshot_bytes = $4, updated_at = now()', [
        data,
        data.length,
      ]),
    setDeviceId: (id) => owned('update matrix_crypto_store set device_id = $3', [id]),
  };
}

/** What `doctor` shows: is there a store, for which device, how large, and when last written. */
export async function cryptoStoreStatus(
  db: Db,
): Promise<Array<{ account: string; deviceId: string | null; bytes: number; updatedAt: Date }>> {
  const r = await db.query<{
    account: string;
    device_id: string | null;
    snapshot_bytes: number;
    updated_at: Date;
  }>('select account, device_id, snapshot_bytes, updated_at from matrix_crypto_store order by account');
  return r.rows.map((x) => ({
    account: x.account,
    deviceId: x.device_id,
    bytes: x.snapshot_bytes,
    updatedAt: x.updated_at,
  }));
}
