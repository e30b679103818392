import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ErrorObject } from 'ajv';
import { type Document, isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { ConfigError } from '../errors.ts';
import { type McpServerConfig, resolveMcpServers } from '../mcp/config.ts';
import { DEFAULT_HOST_JAIL_MODE, type HostJailMode } from '../sandbox/host-jail.ts';
import { resolveSandbox, type SandboxConfig, type SandboxFileKeys } from '../sandbox/sandbox-config.ts';
import { type AttachmentsConfig, resolveAttachments } from './attachments.ts';
import { validate } from './config-validator.js';
import { type DigestsConfig, resolveDigests } from './digests.ts';
import { type ModelsConfig, type RouteEntryConfig, resolveModels } from './models.ts';
import { ENV_KEYS, FIX_HINTS, type LogLevel, SECRET_FILE_KEYS } from './schema.ts';
import { maskUrl, redact, SECRET_ENV_VARS, secretValues, withSecretFiles } from './secrets.ts';

export interface Config {
  dataDir: string;
  workspace: string;
  /** Skill packs: `skills_dir` in the file, else the skills/ folder shipped with steward. */
  skillsDir: string;
  logLevel: LogLevel;
  /** Unset means the embedded PGlite database under `dataDir/pg`. */
  databaseUrl?: string;
  model: { baseUrl: string; name?: string; apiKey?: string };
  telegram?: {
    token: string;
    ownerId: number;
    apiRoot: string;
    /** Webhook mode (`telegram.webhook` in the file); absent means long polling. */
    webhook?: { url: string; host: string; port: number; path: string; secret: string };
  };
  matrix?: { homeserver: string; accessToken: string; owner: string };
  /** Providers, routes (with `default` when a model is named), prices, loop limits. */
  models: ModelsConfig;
  /** `digests:` and `digest_catch_up_minutes` from the file; absent when it names neither. */
  digests?: DigestsConfig;
  configFile?: string;
  /** `sandbox.host_jail`: whether `shell` on the host must, may or may not run in the jail. */
  hostJail: HostJailMode;
  /** `budget:` spend caps in US dollars over the usage ledger; each absent cap is no cap. */
  budget: BudgetCaps;
  /** `sandbox.*`: sandboxd's settings; `configured` says whether steward uses it. */
  sandbox: SandboxConfig;
  /** `mcp.servers`: outside tool servers, in file order (empty when none). */
  mcpServers: McpServerConfig[];
  /** `attachments:` and `transcription:`: what the owner may send and how voice becomes text. */
  attachments: AttachmentsConfig;
  /** Literal secret values, for redaction wherever text leaves the process. */
  secrets: string[];
}

export interface BudgetCaps {
  dailyUsd?: number;
  monthlyUsd?: number;
  perDigestUsd?: number;
}

export type Env = Record<string, string | undefined>;

const BUNDLED_SKILLS = fileURLToPath(new URL('../../skills/', import.meta.url)).replace(/\/$/, '');
const DEFAULT_MODEL_BASE_URL = 'http://127.0.0.1:11434/v1';
const DEFAULT_TELEGRAM_API_ROOT = 'https://api.telegram.org';

type Tree = Record<string, unknown>;

/** Reads the optional file named by STEWARD_CONFIG, lays the environment over it and validates. */
export function loadConfig(env: Env, cwd = process.cwd()): Config {
  let resolved = env;
  try {
    resolved = withSecretFiles(env, SECRET_ENV_VARS, cwd);
    return load(resolved, cwd);
  } catch (error) {
    // Whatever went into the message (a value, a key, a path), it stays one line and secret-free.
    if (error instanceof ConfigError) {
      throw new ConfigError(redact(error.message, secretValues(resolved)).replace(/\s*[\r\n]+\s*/g, ' '));
    }
    throw error;
  }
}

function load(baseEnv: Env, cwd: string): Config {
  const file = baseEnv.STEWARD_CONFIG ? resolve(cwd, baseEnv.STEWARD_CONFIG) : undefined;
  const parsed = file ? readConfigFile(file) : undefined;
  const tree: Tree = structuredClone(parsed?.tree ?? {});
  // A provider's key variable (`api_key_env`) is a secret too, so it may come from a file as well.
  const env = withSecretFiles(baseEnv, providerKeyVars(tree), cwd);
  const where = (key: string): string => {
    const envKey = ENV_KEYS.find((k) => k.path.join('.') === key && set(env[k.env]));
    if (envKey) return envKey.env;
    const line = parsed?.lineOf(key);
    return `${file} ${line ? `line ${line}, ` : ''}key ${key}`;
  };

  for (const { env: name, path, integer } of ENV_KEYS) {
    const value = env[name];
    if (!set(value)) continue;
    setIn(tree, path, integer && /^\d+$/.test(value) ? Number(value) : value);
  }

  if (!validate(tree)) throw new ConfigError(describeSchemaError(validate.errors?.[0], where));

  const t = tree as {
    data_dir?: string;
    workspace?: string;
    skills_dir?: string;
    log_level?: LogLevel;
    model?: { base_url?: string; name?: string };
    telegram?: {
      owner_id?: number;
      api_root?: string;
      webhook?: { url: string; listen_host?: string; listen_port: number; path?: string };
    };
    matrix?: { homeserver?: string; owner?: string };
    budget?: { daily_usd?: number; monthly_usd?: number; per_digest_usd?: number };
    sandbox?: { host_jail?: HostJailMode } & SandboxFileKeys;
  };
  // Paths from the environment are relative to the working directory; paths from the file, to the file.
  const base = (key: string) => (where(key).startsWith('STEWARD_') || !file ? cwd : dirname(file));
  const dataDir = t.data_dir ? resolve(base('data_dir'), t.data_dir) : resolve(cwd, 'data');
  const workspace = t.workspace ? resolve(base('workspace'), t.workspace) : resolve(dataDir, 'workspace');
  const skillsDir = t.skills_dir ? resolve(base('skills_dir'), t.skills_dir) : BUNDLED_SKILLS;

  const modelBaseUrl = t.model?.base_url ?? DEFAULT_MODEL_BASE_URL;
  checkHttpUrl(modelBaseUrl, 'model.base_url', where);

  const model: Config['model'] = { baseUrl: modelBaseUrl.replace(/\/+$/, '') };
  if (t.model?.name) model.name = t.model.name;
  if (set(env.STEWARD_MODEL_API_KEY)) model.apiKey = env.STEWARD_MODEL_API_KEY;
  const models = resolveModels(
    tree as Parameters<typeof resolveModels>[0],
    env,
    { kind: 'openai', ...model },
    where,
    (value, key) => checkHttpUrl(value, key, where),
  );
  const mcpServers = resolveMcpServers(tree as Parameters<typeof resolveMcpServers>[0], env, where);
  const attachments = resolveAttachments(
    tree as Parameters<typeof resolveAttachments>[0],
    env,
    where,
    (value, key) => checkHttpUrl(value, key, where),
  );
  const config: Config = {
    dataDir,
    workspace,
    skillsDir,
    logLevel: t.log_level ?? 'info',
    model,
    models,
    hostJail: t.sandbox?.host_jail ?? DEFAULT_HOST_JAIL_MODE,
    budget: {
      ...(t.budget?.daily_usd !== undefined ? { dailyUsd: t.budget.daily_usd } : {}),
      ...(t.budget?.monthly_usd !== undefined ? { monthlyUsd: t.budget.monthly_usd } : {}),
      ...(t.budget?.per_digest_usd !== undefined ? { perDigestUsd: t.budget.per_digest_usd } : {}),
    },
    sandbox: resolveSandbox(
      {
        ...t.sandbox,
        ...(t.sandbox?.socket ? { socket: resolve(base('sandbox.socket'), t.sandbox.socket) } : {}),
      },
      dataDir,
      workspace,
    ),
    mcpServers,
    attachments,
    // Variables passed to MCP servers are usually tokens: redacted like steward's own.
    secrets: [...new Set([...secretValues(env), ...models.secrets, ...mcpSecrets(mcpServers)])].sort(
      (a, b) => b.length - a.length,
    ),
  };
  if (file) config.configFile = file;
  const digests = resolveDigests(tree as Parameters<typeof resolveDigests>[0], where);
  if (digests) config.digests = digests;

  const dbUrl = env.STEWARD_DATABASE_URL;
  if (set(dbUrl)) {
    if (!/^postgres(ql)?:\/\/[^\s]+$/.test(dbUrl) || !URL.canParse(dbUrl)) {
      throw new ConfigError(
        `config: STEWARD_DATABASE_URL (${maskUrl(dbUrl)}) is not a PostgreSQL URL; use postgres://user:password@host:5432/dbname, or unset it for the embedded database`,
      );
    }
    config.databaseUrl = dbUrl;
  }

  const token = env.STEWARD_TELEGRAM_TOKEN;
  if (set(token)) {
    if (t.telegram?.owner_id === undefined) {
      throw new ConfigError(
        'config: STEWARD_TELEGRAM_TOKEN is set but STEWARD_TELEGRAM_OWNER_ID is not; set it to your numeric Telegram user id (ask @userinfobot), e.g. STEWARD_TELEGRAM_OWNER_ID=123456789',
      );
    }
    const apiRoot = t.telegram.api_root ?? DEFAULT_TELEGRAM_API_ROOT;
    checkHttpUrl(apiRoot, 'telegram.api_root', where);
    config.telegram = { token, ownerId: t.telegram.owner_id, apiRoot: apiRoot.replace(/\/+$/, '') };
    const webhook = t.telegram.webhook;
    if (webhook) config.telegram.webhook = resolveWebhook(webhook, env, where);
  }

  const homeserver = t.matrix?.homeserver;
  if (homeserver) {
    checkHttpUrl(homeserver, 'matrix.homeserver', where);
    const accessToken = env.STEWARD_MATRIX_ACCESS_TOKEN;
    if (!set(accessToken)) {
      throw new ConfigError(
        `config: ${where('matrix.homeserver')} turns Matrix on but STEWARD_MATRIX_ACCESS_TOKEN is not set; set it to the bot account's access token`,
      );
    }
    if (!t.matrix?.owner) {
      throw new ConfigError(
        `config: ${where('matrix.homeserver')} turns Matrix on but STEWARD_MATRIX_OWNER is not set; ${FIX_HINTS['matrix.owner']}`,
      );
    }
    config.matrix = { homeserver: homeserver.replace(/\/+$/, ''), accessToken, owner: t.matrix.owner };
  }
  return config;
}

/** Telegram's alphabet for a webhook secret token; at least 16 characters so it cannot be guessed. */
const WEBHOOK_SECRET = /^[A-Za-z0-9_-]{16,256}$/;
const WEBHOOK_SECRET_HINT =
  'set it to 16-256 characters of A-Z, a-z, 0-9, _ and -, e.g. the output of "openssl rand -hex 32"';

function resolveWebhook(
  webhook: { url: string; listen_host?: string; listen_port: number; path?: string },
  env: Env,
  where: (key: string) => string,
): NonNullable<NonNullable<Config['telegram']>['webhook']> {
  if (!URL.canParse(webhook.url) || new URL(webhook.url).protocol !== 'https:') {
    throw new ConfigError(
      `config: ${where('telegram.webhook.url')}: ${JSON.stringify(URL.canParse(webhook.url) ? maskUrl(webhook.url) : webhook.url)} is not an https URL (Telegram calls webhooks over https only); ${FIX_HINTS['telegram.webhook.url']}`,
    );
  }
  const secret = env.STEWARD_TELEGRAM_WEBHOOK_SECRET;
  if (!set(secret)) {
    throw new ConfigError(
      `config: ${where('telegram.webhook')} turns webhook mode on but STEWARD_TELEGRAM_WEBHOOK_SECRET is not set; ${WEBHOOK_SECRET_HINT}`,
    );
  }
  if (!WEBHOOK_SECRET.test(secret)) {
    throw new ConfigError(
      `config: STEWARD_TELEGRAM_WEBHOOK_SECRET is not a valid Telegram secret token; ${WEBHOOK_SECRET_HINT}`,
    );
  }
  return {
    url: webhook.url,
    host: webhook.listen_host ?? '127.0.0.1',
    port: webhook.listen_port,
    path: webhook.path ?? '/telegram',
    secret,
  };
}

/** The variables named by `providers.*.api_key_env`, well-formed or not (the schema judges them later). */
function providerKeyVars(tree: Tree): string[] {
  const providers = tree.providers;
  if (typeof providers !== 'object' || providers === null) return [];
  return Object.values(providers as Record<string, unknown>)
    .map((p) => (p as { api_key_env?: unknown } | null)?.api_key_env)
    .filter((name): name is string => typeof name === 'string' && /^[A-Z_][A-Z0-9_]*$/.test(name));
}

function mcpSecrets(servers: readonly McpServerConfig[]): string[] {
  return servers.flatMap((s) =>
    s.transport.kind === 'stdio' ? Object.values(s.transport.env).filter((v) => v.length >= 4) : [],
  );
}

/** The default route is needed only by commands that talk to the model. */
export function requireDefaultRoute(config: Config): RouteEntryConfig[] {
  const route = config.models.routes.default;
  if (route) return route;
  throw new ConfigError(
    'config: STEWARD_MODEL is not set; name the model your endpoint serves, e.g. STEWARD_MODEL=llama3.1:8b (or model.name or routes.default in the config file)',
  );
}

function set(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}

function setIn(tree: Tree, path: readonly string[], value: unknown): void {
  let node = tree;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Tree;
  }
  node[path[path.length - 1] as string] = value;
}

function checkHttpUrl(value: string, key: string, where: (key: string) => string): void {
  let ok = false;
  try {
    const url = new URL(value);
    ok = url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    ok = false;
  }
  if (!ok)
    throw new ConfigError(
      `config: ${where(key)}: ${JSON.stringify(URL.canParse(value) ? maskUrl(value) : value)} is not an http(s) URL; ${FIX_HINTS[key]}`,
    );
}

function describeSchemaError(error: ErrorObject | undefined, where: (key: string) => string): string {
  if (!error) return 'config: invalid configuration';
  const key = error.instancePath.slice(1).replaceAll('/', '.');
  if (error.keyword === 'additionalProperties') {
    const extra = String((error.params as { additionalProperty: string }).additionalProperty);
    const full = key ? `${key}.${extra}` : extra;
    const secretVar = SECRET_FILE_KEYS[full];
    if (secretVar) {
      return `config: ${where(full)} is a secret and secrets come from the environment only; remove it from the file and set ${secretVar}`;
    }
    const known = Object.keys(FIX_HINTS)
      .filter((k) => k.startsWith(key ? `${key}.` : ''))
      .map((k) => k.slice(key ? key.length + 1 : 0).split('.')[0]);
    return `config: ${where(full)}: unknown key; remove it or use one of ${[...new Set(known)].join(', ')}`;
  }
  const problem =
    error.keyword === 'type'
      ? `must be ${error.params.type === 'object' ? 'a mapping of keys' : `a${/^[aeiou]/.test(error.params.type) ? 'n' : ''} ${error.params.type}`}`
      : error.keyword === 'minLength'
        ? 'must not be empty'
        : error.keyword === 'enum'
          ? 'is not an allowed value'
          : error.keyword === 'pattern'
            ? 'is not in the expected form'
            : (error.message ?? 'is invalid');
  const hint = FIX_HINTS[key];
  return `config: ${where(key)}: ${problem}${hint ? `; ${hint}` : ''}`;
}

interface ParsedFile {
  tree: Tree;
  lineOf(key: string): number | undefined;
}

function readConfigFile(file: string): ParsedFile {
  if (!existsSync(file)) {
    throw new ConfigError(
      `config: STEWARD_CONFIG names ${file}, which does not exist; create it or unset STEWARD_CONFIG`,
    );
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `config: cannot read ${file} (${(error as NodeJS.ErrnoException).code}); check its permissions`,
    );
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const syntax = doc.errors[0];
  if (syntax) {
    const line = lines.linePos(syntax.pos[0]).line;
    const reason = syntax.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigError(`config: ${file} line ${line}: ${reason}; fix the YAML (or JSON) syntax there`);
  }
  const tree = doc.toJS() ?? {};
  if (typeof tree !== 'object' || Array.isArray(tree)) {
    throw new ConfigError(`config: ${file}: the top level must be a mapping of keys, e.g. "log_level: info"`);
  }
  return { tree, lineOf: (key) => lineOfKey(doc, lines, key.split('.')) };
}

function lineOfKey(doc: Document, lines: LineCounter, path: string[]): number | undefined {
  let node: unknown = doc.contents;
  let line: number | undefined;
  for (const segment of path) {
    if (!isMap(node)) return line;
    const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === segment);
    if (!pair) return line;
    const range = isScalar(pair.key) ? pair.key.range : undefined;
    if (range) line = lines.linePos(range[0]).line;
    node = pair.value;
  }
  return line;
}
