import type { CheckResult } from '../../src/doctor.ts';
import { loadMatrixSdk } from './load-sdk.ts';

export interface StoredCrypto {
  account: string;
  deviceId: string | null;
  bytes: number;
  updatedAt: Date;
}

/**
 * For `steward doctor`: can the Matrix channel encrypt, and what key store does the database hold
 * (the bot's device, its size, when it was last written)? A library that does not load is a
 * warning: steward then works in unencrypted rooms only.
 */
export async function checkMatrixE2ee(stored?: () => Promise<StoredCrypto[]>): Promise<CheckResult> {
  let loaded: Awaited<ReturnType<typeof loadMatrixSdk>>;
  try {
    loaded = await loadMatrixSdk();
  } catch (error) {
    return { status: 'fail', detail: `matrix-bot-sdk did not load: ${(error as Error).message}` };
  }
  const { e2ee } = loaded;
  if (!e2ee.available) return { status: 'warn', detail: e2eeUnavailableText(e2ee.reason) };
  const rows = stored ? await stored().catch((error: Error) => error) : [];
  return { status: 'ok', detail: `end-to-end encryption available (${e2ee.engine}); ${storeText(rows)}` };
}

/** The stored key state in one line. Pure. */
export function storeText(rows: StoredCrypto[] | Error): string {
  if (rows instanceof Error) return `key store not readable: ${rows.message}`;
  if (rows.length === 0) return 'no keys stored yet (made at the first start)';
  return rows
    .map((r) =>
      r.deviceId
        ? `keys of ${r.account} device ${r.deviceId} stored (${Math.ceil(r.bytes / 1024)} KiB, saved ${r.updatedAt.toISOString()})`
        : `keys of ${r.account} not stored yet`,
    )
    .join('; ');
}

/** Said once at startup and by doctor, in the same words. */
export function e2eeUnavailableText(reason: string): string {
  return `end-to-end encryption unavailable (${reason}); steward works in unencrypted rooms only, creates its direct room unencrypted, and answers in encrypted rooms with a notice`;
}
