import { checkMatrixCredentials } from '../../adapters/matrix/check-credentials.ts';
import { checkMatrixE2ee } from '../../adapters/matrix/check-e2ee.ts';
import { cryptoStoreStatus } from '../../adapters/matrix/crypto-store.ts';
import { checkTelegramCredentials } from '../../adapters/telegram/check-credentials.ts';
import { type Config, loadConfig } from '../../src/config/load.ts';
import { redact } from '../../src/config/secrets.ts';
import { type CheckResult, type CheckStatus, checkHostShell, checkModelEndpoint } from '../../src/doctor.ts';
import { createLogger } from '../../src/log.ts';
import { isLoopbackUrl } from '../../src/netguard/loopback-url.ts';
import { checkSandbox } from '../../src/sandbox/check.ts';
import { sandboxClient } from '../../src/sandbox/client.ts';
import { findHostShell } from '../../src/sandbox/host-jail.ts';
import { loadMigrations, schemaStatus } from '../../src/store/migrate.ts';
import { embeddedDbPath, embeddedDbPresent, openDb } from '../../src/store/open-db.ts';
import type { CliIo } from '../io.ts';
import { serverLine } from '../mcp.ts';
import { stateChecks } from './doctor-state.ts';
import { serverStatuses } from './mcp.ts';

const LABEL: Record<CheckStatus, string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };

/** One line per check; exit 1 when any check fails. */
export async function doctorCommand(io: CliIo): Promise<number> {
  let failed = false;
  let secrets: readonly string[] = [];
  const line = (name: string, result: CheckResult) => {
    if (result.status === 'fail') failed = true;
    io.stdout.write(redact(`${LABEL[result.status]} ${name.padEnd(9)} ${result.detail}\n`, secrets));
  };

  let config: Config;
  try {
    config = loadConfig(io.env, io.cwd);
    secrets = config.secrets;
    line('config', { status: 'ok', detail: config.configFile ?? 'environment only (no STEWARD_CONFIG)' });
  } catch (error) {
    line('config', { status: 'fail', detail: (error as Error).message });
    return 1;
  }

  const database = await checkDatabase(config);
  line('database', database.result);
  for (const [name, result] of database.state) line(name, result);
  const { bash, jail } = await findHostShell(config.hostJail);
  line('shell', checkHostShell(bash, jail, config.hostJail, process.getuid?.() === 0));
  if (config.sandbox.configured) line('sandbox', await sandboxLine(config));
  const route = config.models.routes.default;
  if (!route)
    line('model', { status: 'fail', detail: 'STEWARD_MODEL is not set; e.g. STEWARD_MODEL=llama3.1:8b' });
  for (const entry of route ?? []) {
    const provider = config.models.providers[entry.provider];
    if (!provider) continue;
    line(
      'model',
      provider.kind === 'openai'
        ? await checkModelEndpoint(provider.baseUrl, entry.model, provider.apiKey)
        : { status: 'warn', detail: `${provider.baseUrl} (${entry.provider}, ${entry.model}) is not probed` },
    );
  }
  const sensitive = config.models.sensitiveRoute;
  if (sensitive) line('sensitive', checkSensitiveRoute(config, sensitive));
  if (config.telegram)
    line('telegram', await checkTelegramCredentials(config.telegram.apiRoot, config.telegram.token));
  if (config.matrix) {
    line('matrix', await checkMatrixCredentials(config.matrix.homeserver, config.matrix.accessToken));
    line(
      'e2ee',
      await checkMatrixE2ee(async () => {
        if (!config.databaseUrl && !embeddedDbPresent(config.dataDir)) return [];
        const db = await openDb(config);
        try {
          return await cryptoStoreStatus(db);
        } finally {
          await db.close();
        }
      }),
    );
  }
  // One line per MCP server; one that cannot connect does not stop steward, so it warns.
  for (const server of await serverStatuses({ config, log: createLogger('silent', config.secrets) })) {
    const up = server.state === 'connected';
    line('mcp', { status: up ? 'ok' : 'warn', detail: serverLine(server) });
  }
  if (!config.telegram && !config.matrix) {
    line('channels', { status: 'warn', detail: 'none configured; steward start needs Telegram or Matrix' });
  }
  return failed ? 1 : 0;
}

/** The database, and with a current schema the state it holds (spend, questions, digests). */
async function checkDatabase(
  config: Config,
): Promise<{ result: CheckResult; state: Array<[string, CheckResult]> }> {
  if (!config.databaseUrl && !embeddedDbPresent(config.dataDir)) {
    const detail = `embedded; created at ${embeddedDbPath(config.dataDir)} on first use`;
    return { result: { status: 'ok', detail }, state: [] };
  }
  try {
    const db = await openDb(config);
    try {
      const status = await schemaStatus(db, loadMigrations());
      const where = `${db.kind === 'pglite' ? 'embedded ' : ''}${db.location}`;
      if (status.pending.length > 0) {
        const detail = `${where}: ${status.pending.length} migration(s) pending; run steward migrate (start and chat apply them too)`;
        return { result: { status: 'warn', detail }, state: [] };
      }
      const detail = `${where}: schema ${status.current}/${status.latest}`;
      return { result: { status: 'ok', detail }, state: await stateChecks(db, config) };
    } finally {
      await db.close();
    }
  } catch (error) {
    return { result: { status: 'fail', detail: (error as Error).message }, state: [] };
  }
}

/** A sensitive route exists to keep private data on this machine; a remote endpoint defeats that. */
export function checkSensitiveRoute(config: Config, route: string): CheckResult {
  const remote = (config.models.routes[route] ?? [])
    .map((entry) => config.models.providers[entry.provider]?.baseUrl ?? '')
    .filter((url) => !isLoopbackUrl(url));
  if (remote.length > 0) {
    return {
      status: 'warn',
      detail: `sensitive_tool_route "${route}" reaches beyond this machine (${remote.join(', ')}); private data would leave it`,
    };
  }
  return { status: 'ok', detail: `sensitive_tool_route "${route}" stays on loopback` };
}

/** The sandbox line: a fresh container through sandboxd, as `steward sandbox check` runs it. */
async function sandboxLine(config: Config): Promise<CheckResult> {
  const { sandbox } = config;
  const where = `shell ${sandbox.shell === 'container' ? 'in containers' : 'on the host'}, digests in containers`;
  const report = await checkSandbox(sandboxClient(sandbox.socket), sandbox);
  if (report.ok)
    return {
      status: 'ok',
      detail: `sandboxd at ${sandbox.socket}: ${report.image}, uid ${report.uid}, network ${report.network}; ${where}`,
    };
  return {
    status: 'fail',
    detail: `${report.reason}; shell calls that must run in a container fail until it works`,
  };
}
