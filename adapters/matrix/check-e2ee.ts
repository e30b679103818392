import type { CheckResult } from '../../src/doctor.ts';
import { loadMatrixSdk } from './load-sdk.ts';

/** For `steward doctor`: can the Matrix channel encrypt? A missing native library is a warning. */
export async function checkMatrixE2ee(): Promise<CheckResult> {
  try {
    const { e2ee } = await loadMatrixSdk();
    if (e2ee.available) return { status: 'ok', detail: 'end-to-end encryption available' };
    return { status: 'warn', detail: e2eeUnavailableText(e2ee.reason) };
  } catch (error) {
    return { status: 'fail', detail: `matrix-bot-sdk did not load: ${(error as Error).message}` };
  }
}

/** Said once at startup and by doctor, in the same words. */
export function e2eeUnavailableText(reason: string): string {
  return `end-to-end encryption unavailable (${reason}); steward works in unencrypted rooms only, creates its direct room unencrypted, and answers in encrypted rooms with a notice`;
}
