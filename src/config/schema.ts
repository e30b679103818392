// The shape of the optional config file. Secrets are deliberately absent: they come from the
// environment only, and a file that names one is refused with a pointer to the variable.

import { mcpSchema } from '../mcp/config.ts';
import { HOST_JAIL_MODES } from '../sandbox/host-jail.ts';
import { SANDBOX_NETWORKS, SANDBOX_SHELL_MODES } from '../sandbox/sandbox-config.ts';
import { ATTACHMENT_FIX_HINTS, attachmentsSchema, transcriptionSchema } from './attachments.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const path = { type: 'string', minLength: 1 } as const;
const url = { type: 'string', minLength: 1 } as const;

export const configFileSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    data_dir: path,
    workspace: path,
    skills_dir: path,
    log_level: { type: 'string', enum: LOG_LEVELS },
    model: {
      type: 'object',
      additionalProperties: false,
      properties: { base_url: url, name: { type: 'string', minLength: 1 }, vision: { type: 'boolean' } },
    },
    telegram: {
      type: 'object',
      additionalProperties: false,
      // Beyond 2^53 a number loses digits, and the owner would silently never be recognised.
      properties: {
        owner_id: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
        api_root: url,
        // Webhook mode instead of long polling; the secret token comes from the environment.
        webhook: {
          type: 'object',
          additionalProperties: false,
          required: ['url', 'listen_port'],
          properties: {
            url,
            listen_host: { type: 'string', minLength: 1 },
            listen_port: { type: 'integer', minimum: 1, maximum: 65535 },
            path: { type: 'string', pattern: '^/\\S*$' },
          },
        },
      },
    },
    providers: {
      type: 'object',
      propertyNames: { pattern: '^[a-z][a-z0-9_-]*$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['kind', 'base_url'],
        properties: {
          kind: { type: 'string', enum: ['openai', 'anthropic'] },
          base_url: url,
          api_key_env: { type: 'string', pattern: '^[A-Z_][A-Z0-9_]*$' },
          effort_hint: { type: 'boolean' },
          thinking_budget: {
            type: 'object',
            additionalProperties: false,
            required: ['low', 'normal'],
            properties: { low: { type: 'integer', minimum: 0 }, normal: { type: 'integer', minimum: 1024 } },
          },
        },
      },
    },
    routes: {
      type: 'object',
      propertyNames: { pattern: '^[a-z][a-z0-9_-]*$' },
      additionalProperties: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['provider', 'model'],
          properties: {
            provider: { type: 'string', minLength: 1 },
            model: { type: 'string', minLength: 1 },
            vision: { type: 'boolean' },
          },
        },
      },
    },
    prices: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['input_per_mtok', 'output_per_mtok'],
        properties: {
          input_per_mtok: { type: 'number', minimum: 0 },
          output_per_mtok: { type: 'number', minimum: 0 },
        },
      },
    },
    sensitive_tool_route: { type: 'string', minLength: 1 },
    offload: {
      type: 'object',
      additionalProperties: false,
      properties: {
        threshold_bytes: { type: 'integer', minimum: 1024, maximum: 1048576 },
        shell_threshold_bytes: { type: 'integer', minimum: 1024, maximum: 1048576 },
        retention_days: { type: 'number', exclusiveMinimum: 0, maximum: 365 },
      },
    },
    compaction: {
      type: 'object',
      additionalProperties: false,
      properties: {
        budget_tokens: { type: 'integer', minimum: 1000 },
        keep_turns: { type: 'integer', minimum: 1, maximum: 100 },
      },
    },
    loop: {
      type: 'object',
      additionalProperties: false,
      properties: {
        max_steps: { type: 'integer', minimum: 2, maximum: 100 },
        max_repeats: { type: 'integer', minimum: 2, maximum: 20 },
        parallel_tools: { type: 'integer', minimum: 1, maximum: 16 },
        tool_timeout_s: { type: 'number', exclusiveMinimum: 0, maximum: 3600 },
        permission_timeout_s: { type: 'number', minimum: 10, maximum: 604800 },
        grant_ttl_hours: { type: 'number', exclusiveMinimum: 0, maximum: 168 },
      },
    },
    matrix: {
      type: 'object',
      additionalProperties: false,
      properties: { homeserver: url, owner: { type: 'string', pattern: '^@[^:\\s]+:\\S+$' } },
    },
    sandbox: {
      type: 'object',
      additionalProperties: false,
      properties: {
        host_jail: { type: 'string', enum: HOST_JAIL_MODES },
        socket: path,
        image: { type: 'string', minLength: 1, pattern: '^[A-Za-z0-9][A-Za-z0-9._/:@-]*$' },
        shell: { type: 'string', enum: SANDBOX_SHELL_MODES },
        network: { type: 'string', enum: SANDBOX_NETWORKS },
        memory_mb: { type: 'integer', minimum: 16, maximum: 65536 },
        cpus: { type: 'number', exclusiveMinimum: 0, maximum: 64 },
        pids: { type: 'integer', minimum: 8, maximum: 32768 },
      },
    },
    budget: {
      type: 'object',
      additionalProperties: false,
      properties: {
        daily_usd: { type: 'number', exclusiveMinimum: 0 },
        monthly_usd: { type: 'number', exclusiveMinimum: 0 },
        per_digest_usd: { type: 'number', exclusiveMinimum: 0 },
      },
    },
    // Each entry is checked field by field in digests.ts, so errors name the digest's own keys.
    digests: { type: 'object', additionalProperties: { type: 'object' } },
    digest_catch_up_minutes: { type: 'number', exclusiveMinimum: 0, maximum: 10080 },
    mcp: mcpSchema,
    attachments: attachmentsSchema,
    transcription: transcriptionSchema,
  },
} as const;

/** Environment variables that set a file key; the environment wins over the file. */
export const ENV_KEYS: ReadonlyArray<{ env: string; path: readonly string[]; integer?: boolean }> = [
  { env: 'STEWARD_DATA_DIR', path: ['data_dir'] },
  { env: 'STEWARD_WORKSPACE', path: ['workspace'] },
  { env: 'STEWARD_LOG_LEVEL', path: ['log_level'] },
  { env: 'STEWARD_MODEL_BASE_URL', path: ['model', 'base_url'] },
  { env: 'STEWARD_MODEL', path: ['model', 'name'] },
  { env: 'STEWARD_TELEGRAM_OWNER_ID', path: ['telegram', 'owner_id'], integer: true },
  { env: 'STEWARD_TELEGRAM_API_ROOT', path: ['telegram', 'api_root'] },
  { env: 'STEWARD_MATRIX_HOMESERVER', path: ['matrix', 'homeserver'] },
  { env: 'STEWARD_MATRIX_OWNER', path: ['matrix', 'owner'] },
  { env: 'STEWARD_SANDBOX_HOST_JAIL', path: ['sandbox', 'host_jail'] },
  { env: 'STEWARD_SANDBOX_SOCKET', path: ['sandbox', 'socket'] },
  { env: 'STEWARD_SANDBOX_IMAGE', path: ['sandbox', 'image'] },
  { env: 'STEWARD_SANDBOX_SHELL', path: ['sandbox', 'shell'] },
  { env: 'STEWARD_TRANSCRIPTION_BASE_URL', path: ['transcription', 'base_url'] },
  { env: 'STEWARD_TRANSCRIPTION_MODEL', path: ['transcription', 'model'] },
];

/** Keys an operator might put in the file that must live in the environment instead. */
export const SECRET_FILE_KEYS: Readonly<Record<string, string>> = {
  database_url: 'STEWARD_DATABASE_URL',
  'model.api_key': 'STEWARD_MODEL_API_KEY',
  'telegram.token': 'STEWARD_TELEGRAM_TOKEN',
  'matrix.access_token': 'STEWARD_MATRIX_ACCESS_TOKEN',
  'transcription.api_key': 'STEWARD_TRANSCRIPTION_API_KEY',
};

/** How to fix a bad value, by key. */
export const FIX_HINTS: Readonly<Record<string, string>> = {
  data_dir: 'give a folder path, e.g. ./data',
  workspace: 'give a folder path, e.g. ./data/workspace',
  skills_dir: 'give the folder holding <name>/SKILL.md packs, e.g. ./skills',
  log_level: `use one of ${LOG_LEVELS.join(', ')}`,
  'model.base_url': 'give the endpoint ending in /v1, e.g. http://127.0.0.1:11434/v1',
  'model.name': 'name the model on your endpoint, e.g. llama3.1:8b',
  'model.vision': 'true when the model takes images (photos the owner sends go to it as image input)',
  'telegram.owner_id': 'use your numeric Telegram user id, e.g. 123456789',
  'telegram.api_root': 'give an http(s) URL, e.g. https://api.telegram.org',
  'telegram.webhook':
    'give {url, listen_port} and optionally listen_host and path, e.g. {url: https://bot.example.org/telegram, listen_port: 8443}',
  'telegram.webhook.url': 'give the public https URL Telegram calls, e.g. https://bot.example.org/telegram',
  'telegram.webhook.listen_host': 'give the address to listen on, e.g. 127.0.0.1 (the default)',
  'telegram.webhook.listen_port': 'use a TCP port from 1 to 65535, e.g. 8443',
  'telegram.webhook.path':
    'give the path the server answers on, starting with /, e.g. /telegram (the default)',
  'matrix.homeserver': 'give the homeserver URL, e.g. https://matrix.example.org',
  'matrix.owner': 'use a full Matrix ID, e.g. @me:example.org',
  providers: 'map a name to {kind: openai|anthropic, base_url, api_key_env}',
  routes: 'map a route name to a list of {provider, model, vision}, tried in order',
  prices: 'map a model name to {input_per_mtok, output_per_mtok} in US dollars',
  sensitive_tool_route: 'name a route under routes that uses a local model, e.g. local',
  'offload.threshold_bytes': 'use bytes from 1024, e.g. 8192',
  'offload.shell_threshold_bytes': 'use bytes from 1024, e.g. 4096',
  'offload.retention_days': 'use days, e.g. 7',
  'compaction.budget_tokens': 'use a token count from 1000, e.g. 24000',
  'compaction.keep_turns': 'use a whole number of recent turns to keep verbatim, e.g. 4',
  'loop.max_steps': 'use a whole number from 2 to 100 (default 16)',
  'loop.max_repeats': 'use a whole number from 2 to 20 (default 3)',
  'loop.parallel_tools': 'use a whole number from 1 to 16 (default 4)',
  'loop.tool_timeout_s': 'use seconds, e.g. 60',
  'loop.grant_ttl_hours': 'use hours up to 168, e.g. 12',
  'loop.permission_timeout_s': 'use seconds from 10, e.g. 1800 (30 minutes)',
  'sandbox.host_jail': `use one of ${HOST_JAIL_MODES.join(', ')}: auto jails shell on the host when bubblewrap works, required refuses to run it unjailed`,
  'sandbox.socket': "give the path of sandboxd's Unix socket, e.g. ./data/sandboxd.sock",
  'sandbox.image':
    'name an image that exists on the Docker engine, e.g. steward-sandbox:latest (scripts/build-sandbox-image.sh builds it)',
  'sandbox.shell': `use one of ${SANDBOX_SHELL_MODES.join(', ')}: where chat's shell runs`,
  'sandbox.network': `use one of ${SANDBOX_NETWORKS.join(', ')} (default none)`,
  'sandbox.memory_mb': 'use megabytes from 16, e.g. 512',
  'sandbox.cpus': 'use a number of CPUs, e.g. 1 or 0.5',
  'sandbox.pids': 'use a process count from 8, e.g. 128',
  digests: 'map a digest id to {cron, timezone, channel, room, and prompt or skill}',
  digest_catch_up_minutes: 'use minutes up to 10080, e.g. 60: a fire missed by less runs late, once',
  mcp: 'give servers: {NAME: {command, args, env} or {url, allow_hosts}}',
  'mcp.servers':
    'map a server name (lowercase letters, digits, _ and -) to {command, args, env} or {url, allow_hosts}, with trusted, sensitive, allow, deny, index',
  ...ATTACHMENT_FIX_HINTS,
};
