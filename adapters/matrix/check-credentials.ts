import { type CheckResult, probeJson } from '../../src/doctor.ts';

/** Asks the homeserver whose access token this is (whoami). */
export async function checkMatrixCredentials(homeserver: string, accessToken: string): Promise<CheckResult> {
  const result = await probeJson(`${homeserver}/_matrix/client/v3/account/whoami`, {
    authorization: `Bearer ${accessToken}`,
  });
  if ('error' in result) return { status: 'fail', detail: `cannot reach ${homeserver}: ${result.error}` };
  const body = result.body as { user_id?: string; error?: string } | undefined;
  if (result.status === 401) {
    return {
      status: 'fail',
      detail: `${homeserver} rejected STEWARD_MATRIX_ACCESS_TOKEN; log the bot in again for a new token`,
    };
  }
  if (result.status !== 200 || !body?.user_id) {
    return {
      status: 'fail',
      detail: `${homeserver} answered HTTP ${result.status}: ${body?.error ?? 'unexpected answer'}`,
    };
  }
  return { status: 'ok', detail: `bot ${body.user_id} on ${homeserver}` };
}
