// Bot accounts of their own for Matrix suites, registered with the test homeserver's shared secret
// as scripts/test-services.sh registers its users. A suite with its own bot never shares the bot's
// direct room, m.direct, devices or sync stream with another suite running at the same time.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where scripts/test-services.sh keeps Synapse and its registration secret. */
function synapseSecret(user: string): string {
  const dir =
    process.env.STEWARD_TEST_SYNAPSE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'steward-test', 'synapse');
  const file = join(dir, 'shared-secret');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    throw new Error(
      `cannot register ${user}: no Synapse shared secret at ${file} (set STEWARD_TEST_SYNAPSE_DIR)`,
    );
  }
}

async function post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    json: (await response.json().catch(() => ({}))) as Record<string, unknown>,
  };
}

/** `user`'s access token, logged in on `deviceId`; the account is registered first if need be. */
export async function botAccountToken(homeserver: string, user: string, deviceId: string): Promise<string> {
  const password = `${user}-test-password`;
  const login = () =>
    post(`${homeserver}/_matrix/client/v3/login`, {
      type: 'm.login.password',
      identifier: { type: 'm.id.user', user: user },
      password,
      device_id: deviceId,
    });
  let answer = await login();
  if (answer.status === 403) {
    const nonce = (
      (await (await fetch(`${homeserver}/_synapse/admin/v1/register`)).json()) as { nonce: string }
    ).nonce;
    const mac = createHmac('sha1', synapseSecret(user))
      .update([nonce, user, password, 'notadmin'].join('\0'))
      .digest('hex');
    const registered = await post(`${homeserver}/_synapse/admin/v1/register`, {
      nonce,
      username: user,
      password,
      admin: false,
      mac,
    });
    if (registered.status !== 200 && registered.json.errcode !== 'M_USER_IN_USE')
      throw new Error(`registering ${user}: HTTP ${registered.status} ${JSON.stringify(registered.json)}`);
    answer = await login();
  }
  const token = answer.json.access_token;
  if (answer.status !== 200 || typeof token !== 'string')
    throw new Error(`logging ${user} in: HTTP ${answer.status} ${JSON.stringify(answer.json)}`);
  return token;
}
