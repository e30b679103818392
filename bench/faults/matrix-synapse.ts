// A Synapse of the suite's own: the test services' virtual environment (scripts/test-services.sh
// installs it from PyPI), a fresh configuration and SQLite database in a temporary folder, a free
// loopback port. The suite may stop and start it (or make its rate limits tight) without touching
// the shared test homeserver other suites use.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { tempDir } from '../../test/support/services.ts';

export interface PrivateSynapse {
  url: string;
  /** Registers `user` (admin when asked) and logs it in; returns its access token. */
  account(user: string, options?: { admin?: boolean }): Promise<string>;
  /** Lifts the rate limits for one user (through the admin API; `adminToken` is an admin's). */
  unlimit(adminToken: string, userId: string): Promise<void>;
  /** SIGTERM and wait: a clean shutdown, in-flight requests cut. */
  stop(): Promise<void>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** `rcMessage`: Synapse's rc_message for every user not lifted with `unlimit` (relaxed when absent). */
export interface SynapseOptions {
  rcMessage?: { per_second: number; burst_count: number };
}

function venvPython(): string {
  const dir =
    process.env.STEWARD_TEST_SYNAPSE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'steward-test', 'synapse');
  const python = join(dir, 'venv', 'bin', 'python');
  if (!existsSync(python))
    throw new Error(
      `no Synapse virtual environment at ${python}; run eval "$(bash scripts/test-services.sh)" first`,
    );
  return python;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise((done) => server.close(done));
  return port;
}

async function post(url: string, body: unknown, token?: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    json: (await response.json().catch(() => ({}))) as Record<string, unknown>,
  };
}

export async function privateSynapse(options: SynapseOptions = {}): Promise<PrivateSynapse> {
  const python = venvPython();
  const dir = tempDir('steward-synapse-');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  execFileSync(
    python,
    [
      '-m',
      'synapse.app.homeserver',
      '--server-name',
      'localhost',
      '--config-path',
      'homeserver.yaml',
      '--data-directory',
      join(dir.path, 'data'),
      '--generate-config',
      '--report-stats=no',
    ],
    { cwd: dir.path, stdio: 'pipe' },
  );
  const secret = randomBytes(24).toString('hex');
  const relaxed = '{per_second: 1000, burst_count: 1000}';
  const message = options.rcMessage
    ? `{per_second: ${options.rcMessage.per_second}, burst_count: ${options.rcMessage.burst_count}}`
    : relaxed;
  writeFileSync(
    join(dir.path, 'faults.yaml'),
    [
      'listeners:',
      `  - {port: ${port}, bind_addresses: ['127.0.0.1'], type: http, tls: false, x_forwarded: false, resources: [{names: [client], compress: false}]}`,
      `registration_shared_secret: "${secret}"`,
      'enable_registration: false',
      'report_stats: false',
      'presence: {enabled: false}',
      'trusted_key_servers: []',
      'suppress_key_server_warning: true',
      'url_preview_enabled: false',
      `rc_message: ${message}`,
      ...[
        'rc_registration',
        'rc_room_creation',
        'rc_joins_per_room',
        'rc_admin_redaction',
        'rc_media_create',
        'rc_3pid_validation',
      ].map((k) => `${k}: ${relaxed}`),
      `rc_login: {address: ${relaxed}, account: ${relaxed}, failed_attempts: ${relaxed}}`,
      `rc_joins: {local: ${relaxed}, remote: ${relaxed}}`,
      `rc_invites: {per_room: ${relaxed}, per_user: ${relaxed}, per_issuer: ${relaxed}}`,
      '',
    ].join('\n'),
  );
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const up = async () => {
    try {
      return (await fetch(`${url}/_matrix/client/versions`, { signal: AbortSignal.timeout(2000) })).ok;
    } catch {
      return false;
    }
  };
  const start = async () => {
    const proc = spawn(
      python,
      ['-m', 'synapse.app.homeserver', '-c', 'homeserver.yaml', '-c', 'faults.yaml'],
      {
        cwd: dir.path,
        stdio: 'ignore',
        detached: true,
      },
    );
    child = proc;
    let gone = false;
    exited = new Promise((done) =>
      proc.on('exit', () => {
        gone = true;
        done();
      }),
    );
    const deadline = Date.now() + 120_000;
    while (!(await up())) {
      if (gone) throw new Error(`the private Synapse exited at start; see ${dir.path}/homeserver.log`);
      if (Date.now() > deadline) throw new Error(`the private Synapse did not answer on ${url}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const signal = async (name: NodeJS.Signals) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-(child.pid as number), name);
    } catch {
      // already gone
    }
    await exited;
  };
  await start();
  return {
    url,
    async account(user, { admin = false } = {}) {
      const password = `${user}-faults-password`;
      const nonce = ((await (await fetch(`${url}/_synapse/admin/v1/register`)).json()) as { nonce: string })
        .nonce;
      const mac = createHmac('sha1', secret)
        .update([nonce, user, password, admin ? 'admin' : 'notadmin'].join('\0'))
        .digest('hex');
      const registered = await post(`${url}/_synapse/admin/v1/register`, {
        nonce,
        username: user,
        password,
        admin,
        mac,
      });
      const token = registered.json.access_token;
      if (registered.status !== 200 || typeof token !== 'string')
        throw new Error(`registering ${user}: HTTP ${registered.status} ${JSON.stringify(registered.json)}`);
      return token;
    },
    async unlimit(adminToken, userId) {
      const answer = await post(
        `${url}/_synapse/admin/v1/users/${encodeURIComponent(userId)}/override_ratelimit`,
        { messages_per_second: 0, burst_count: 0 },
        adminToken,
      );
      if (answer.status !== 200) throw new Error(`override_ratelimit: HTTP ${answer.status}`);
    },
    stop: () => signal('SIGTERM'),
    kill: () => signal('SIGKILL'),
    start,
    async destroy() {
      await signal('SIGKILL');
      // With FAULTS_DEBUG, the homeserver's own story (each request and how long it took) is kept.
      const log = join(dir.path, 'homeserver.log');
      if (process.env.FAULTS_DEBUG && existsSync(log))
        copyFileSync(log, join(process.env.FAULTS_OUT ?? '/tmp', `synapse-${port}.log`));
      dir.remove();
    },
  };
}
