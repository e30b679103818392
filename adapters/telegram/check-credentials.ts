import { type CheckResult, probeJson } from '../../src/doctor.ts';

/** Asks the Bot API who the token belongs to (getMe). The token never appears in the result. */
export async function checkTelegramCredentials(apiRoot: string, token: string): Promise<CheckResult> {
  const result = await probeJson(`${apiRoot}/bot${token}/getMe`);
  if ('error' in result) return { status: 'fail', detail: `cannot reach ${apiRoot}: ${result.error}` };
  const body = result.body as
    | { ok?: boolean; result?: { username?: string }; description?: string }
    | undefined;
  if (result.status === 401 || result.status === 404) {
    return {
      status: 'fail',
      detail: `${apiRoot} rejected STEWARD_TELEGRAM_TOKEN; copy the token from @BotFather again`,
    };
  }
  if (!body?.ok) {
    return {
      status: 'fail',
      detail: `${apiRoot} answered HTTP ${result.status}: ${body?.description ?? 'no description'}`,
    };
  }
  return { status: 'ok', detail: `bot @${body.result?.username ?? '?'} on ${apiRoot}` };
}
