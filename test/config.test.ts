import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config, type Env, loadConfig, requireDefaultRoute } from '../src/config/load.ts';
import { maskUrl, redact, SECRET_ENV_VARS, secretValues } from '../src/config/secrets.ts';
import { ConfigError } from '../src/errors.ts';
import { DEFAULT_ATTACHMENT_LIMITS } from '../src/limits.ts';

let root: string;
/** The working directory loadConfig is given; never the file's folder. */
let cwd: string;
/** Where config files are written; a sibling of cwd so the two bases are told apart. */
let confDir: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'steward-config-'));
  cwd = join(root, 'cwd');
  confDir = join(root, 'etc');
  mkdirSync(cwd);
  mkdirSync(confDir);
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

let fileCount = 0;
/** Writes a config file under confDir and returns its absolute path. */
function writeConfig(text: string, ext = 'yaml'): string {
  fileCount += 1;
  const file = join(confDir, `steward-${fileCount}.${ext}`);
  writeFileSync(file, text);
  return file;
}

/** Runs loadConfig expecting a ConfigError and returns its message. */
function configError(env: Env): string {
  try {
    loadConfig(env, cwd);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig: defaults', () => {
  it('fills every default from an empty environment', () => {
    const config = loadConfig({}, cwd);
    expect(config).toEqual({
      dataDir: join(cwd, 'data'),
      workspace: join(cwd, 'data', 'workspace'),
      skillsDir: fileURLToPath(new URL('../skills', import.meta.url)),
      logLevel: 'info',
      model: { baseUrl: 'http://127.0.0.1:11434/v1' },
      models: {
        providers: { default: { kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1' } },
        routes: {},
        prices: {},
        secrets: [],
        loop: {
          maxSteps: 16,
          maxRepeats: 3,
          parallelTools: 4,
          toolTimeoutMs: 60_000,
          permissionTimeoutMs: 1_800_000,
          grantTtlMs: 43_200_000,
        },
        offload: { defaultBytes: 8192, thresholdBytes: { shell: 4096 }, retentionMs: 604_800_000 },
        compaction: { budgetTokens: 24_000, keepTurns: 4, maxTurns: 200 },
      },
      hostJail: 'auto',
      budget: {},
      sandbox: {
        socket: join(cwd, 'data', 'sandboxd.sock'),
        image: 'steward-sandbox:latest',
        shell: 'host',
        network: 'none',
        memoryMb: 512,
        cpus: 1,
        pids: 128,
        workspaceRoot: join(cwd, 'data', 'workspace'),
        configured: false,
      },
      mcpServers: [],
      attachments: { limits: DEFAULT_ATTACHMENT_LIMITS, sensitive: [] },
      secrets: [],
    } satisfies Config);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.telegram).toBeUndefined();
    expect(config.matrix).toBeUndefined();
    expect(config.configFile).toBeUndefined();
  });

  it('resolves the default data dir against cwd even when a config file is given', () => {
    const file = writeConfig('log_level: warn\n');
    const config = loadConfig({ STEWARD_CONFIG: file }, cwd);
    expect(config.configFile).toBe(file);
    expect(config.logLevel).toBe('warn');
    expect(config.dataDir).toBe(join(cwd, 'data'));
    expect(config.workspace).toBe(join(cwd, 'data', 'workspace'));
  });

  it('puts the default workspace under a configured data dir', () => {
    const config = loadConfig({ STEWARD_DATA_DIR: '/srv/steward' }, cwd);
    expect(config.dataDir).toBe('/srv/steward');
    expect(config.workspace).toBe('/srv/steward/workspace');
  });

  it('treats an empty file as no settings', () => {
    const config = loadConfig({ STEWARD_CONFIG: writeConfig('') }, cwd);
    expect(config.dataDir).toBe(join(cwd, 'data'));
    expect(config.logLevel).toBe('info');
  });

  it('resolves a relative STEWARD_CONFIG against cwd', () => {
    writeFileSync(join(cwd, 'local.yaml'), 'log_level: debug\n');
    const config = loadConfig({ STEWARD_CONFIG: 'local.yaml' }, cwd);
    expect(config.configFile).toBe(join(cwd, 'local.yaml'));
    expect(config.logLevel).toBe('debug');
  });
});

describe('loadConfig: empty variables count as unset', () => {
  const empties: Array<[string, (c: Config) => unknown, unknown]> = [
    ['STEWARD_CONFIG', (c) => c.configFile, undefined],
    ['STEWARD_DATA_DIR', (c) => c.dataDir, join('<cwd>', 'data')],
    ['STEWARD_WORKSPACE', (c) => c.workspace, join('<cwd>', 'data', 'workspace')],
    ['STEWARD_LOG_LEVEL', (c) => c.logLevel, 'info'],
    ['STEWARD_MODEL_BASE_URL', (c) => c.model.baseUrl, 'http://127.0.0.1:11434/v1'],
    ['STEWARD_MODEL', (c) => c.model.name, undefined],
    ['STEWARD_MODEL_API_KEY', (c) => c.model.apiKey, undefined],
    ['STEWARD_DATABASE_URL', (c) => c.databaseUrl, undefined],
    ['STEWARD_TELEGRAM_TOKEN', (c) => c.telegram, undefined],
    ['STEWARD_MATRIX_HOMESERVER', (c) => c.matrix, undefined],
  ];
  it.each(empties)('%s=""', (name, pick, expected) => {
    const want = typeof expected === 'string' ? expected.replace('<cwd>', cwd) : expected;
    expect(pick(loadConfig({ [name]: '' }, cwd))).toEqual(want);
  });

  it('an empty variable does not override the file', () => {
    const file = writeConfig('log_level: warn\nmodel:\n  name: from-file\n');
    const config = loadConfig({ STEWARD_CONFIG: file, STEWARD_LOG_LEVEL: '', STEWARD_MODEL: '' }, cwd);
    expect(config.logLevel).toBe('warn');
    expect(config.model.name).toBe('from-file');
  });

  it('an empty STEWARD_TELEGRAM_OWNER_ID with a token is reported as missing', () => {
    const message = configError({ STEWARD_TELEGRAM_TOKEN: '123:abcdef', STEWARD_TELEGRAM_OWNER_ID: '' });
    expect(message).toContain('STEWARD_TELEGRAM_OWNER_ID is not');
  });
});

describe('loadConfig: file formats and precedence', () => {
  const yaml = [
    'data_dir: state',
    'workspace: ../work',
    'log_level: debug',
    'model:',
    '  base_url: http://model.local:8080/v1/',
    '  name: qwen2.5:7b',
    'telegram:',
    '  owner_id: 42',
    '  api_root: http://bot-api.local/',
    'matrix:',
    '  homeserver: https://matrix.example.org/',
    "  owner: '@me:example.org'",
    '',
  ].join('\n');
  const json = JSON.stringify(
    {
      data_dir: 'state',
      workspace: '../work',
      log_level: 'debug',
      model: { base_url: 'http://model.local:8080/v1/', name: 'qwen2.5:7b' },
      telegram: { owner_id: 42, api_root: 'http://bot-api.local/' },
      matrix: { homeserver: 'https://matrix.example.org/', owner: '@me:example.org' },
    },
    null,
    2,
  );
  const secrets = {
    STEWARD_TELEGRAM_TOKEN: '123:telegram-secret',
    STEWARD_MATRIX_ACCESS_TOKEN: 'syt_matrix_secret',
  };

  it.each([
    ['YAML', yaml, 'yaml'],
    ['JSON', json, 'json'],
    ['JSON with tab indentation', json.replaceAll('  ', '\t'), 'json'],
  ])('loads every key from %s', (_label, text, ext) => {
    const file = writeConfig(text, ext);
    const config = loadConfig({ STEWARD_CONFIG: file, ...secrets }, cwd);
    expect(config).toMatchObject({
      configFile: file,
      // Relative paths in the file are relative to the file's folder, not to cwd.
      dataDir: join(confDir, 'state'),
      workspace: join(root, 'work'),
      logLevel: 'debug',
      model: { baseUrl: 'http://model.local:8080/v1', name: 'qwen2.5:7b' },
      telegram: { token: '123:telegram-secret', ownerId: 42, apiRoot: 'http://bot-api.local' },
      matrix: {
        homeserver: 'https://matrix.example.org',
        accessToken: 'syt_matrix_secret',
        owner: '@me:example.org',
      },
    });
  });

  it('lets every environment variable win over the file', () => {
    const file = writeConfig(yaml);
    const config = loadConfig(
      {
        STEWARD_CONFIG: file,
        ...secrets,
        STEWARD_DATA_DIR: 'env-data',
        STEWARD_WORKSPACE: 'env-work',
        STEWARD_LOG_LEVEL: 'error',
        STEWARD_MODEL_BASE_URL: 'https://api.example.com/v1',
        STEWARD_MODEL: 'env-model',
        STEWARD_TELEGRAM_OWNER_ID: '7',
        STEWARD_TELEGRAM_API_ROOT: 'https://tg.example.com',
        STEWARD_MATRIX_HOMESERVER: 'https://env.example.org',
        STEWARD_MATRIX_OWNER: '@env:example.org',
      },
      cwd,
    );
    expect(config).toMatchObject({
      // Relative paths from the environment are relative to cwd.
      dataDir: join(cwd, 'env-data'),
      workspace: join(cwd, 'env-work'),
      logLevel: 'error',
      model: { baseUrl: 'https://api.example.com/v1', name: 'env-model' },
      telegram: { ownerId: 7, apiRoot: 'https://tg.example.com' },
      matrix: { homeserver: 'https://env.example.org', owner: '@env:example.org' },
    });
  });

  it('mixes bases: data dir from the environment, workspace from the file', () => {
    const file = writeConfig('workspace: ws\n');
    const config = loadConfig({ STEWARD_CONFIG: file, STEWARD_DATA_DIR: 'd' }, cwd);
    expect(config.dataDir).toBe(join(cwd, 'd'));
    expect(config.workspace).toBe(join(confDir, 'ws'));
  });

  it('keeps absolute paths as they are', () => {
    const file = writeConfig('data_dir: /var/lib/steward\nworkspace: /home/me/ws\n');
    const config = loadConfig({ STEWARD_CONFIG: file }, cwd);
    expect(config.dataDir).toBe('/var/lib/steward');
    expect(config.workspace).toBe('/home/me/ws');
  });

  it('takes secrets from the environment and lists them for redaction', () => {
    const config = loadConfig(
      {
        STEWARD_MODEL_API_KEY: 'sk-model-key',
        STEWARD_DATABASE_URL: 'postgres://steward:db-pass@db:5432/steward',
      },
      cwd,
    );
    expect(config.model.apiKey).toBe('sk-model-key');
    expect(config.databaseUrl).toBe('postgres://steward:db-pass@db:5432/steward');
    expect(config.secrets).toEqual(
      expect.arrayContaining(['sk-model-key', 'db-pass', 'postgres://steward:db-pass@db:5432/steward']),
    );
  });

  it.each([
    'postgres://u:p@localhost/db',
    'postgresql://u:p@localhost:5432/db',
    'postgres://localhost/db?sslmode=require',
  ])('accepts the PostgreSQL URL %s', (url) => {
    expect(loadConfig({ STEWARD_DATABASE_URL: url }, cwd).databaseUrl).toBe(url);
  });

  it('accepts a numeric owner id given as a quoted-free YAML number and as an env string', () => {
    const file = writeConfig('telegram:\n  owner_id: 123456789\n');
    expect(
      loadConfig({ STEWARD_CONFIG: file, STEWARD_TELEGRAM_TOKEN: 'tok-1234' }, cwd).telegram?.ownerId,
    ).toBe(123456789);
    expect(
      loadConfig({ STEWARD_TELEGRAM_TOKEN: 'tok-1234', STEWARD_TELEGRAM_OWNER_ID: '987654321' }, cwd)
        .telegram,
    ).toEqual({ token: 'tok-1234', ownerId: 987654321, apiRoot: 'https://api.telegram.org' });
  });
});

interface ErrorCase {
  name: string;
  /** Builds the environment; may write files. */
  env: () => Env;
  /** Every fragment must appear in the message. */
  contains: Array<string | ((file: string) => string)>;
  /** None may appear in the message. */
  excludes?: string[];
}

/** The config file of the case being built, for fragments that name it. */
let caseFile = '';
function file(text: string, ext = 'yaml'): string {
  caseFile = writeConfig(text, ext);
  return caseFile;
}

const knownTopKeys =
  'data_dir, workspace, skills_dir, log_level, model, telegram, matrix, providers, routes, prices, sensitive_tool_route, offload, compaction, loop';

const errorCases: ErrorCase[] = [
  {
    name: 'STEWARD_CONFIG names a missing file',
    env: () => ({ STEWARD_CONFIG: join(confDir, 'nope.yaml') }),
    contains: [() => join(confDir, 'nope.yaml'), 'does not exist', 'unset STEWARD_CONFIG'],
  },
  {
    name: 'YAML syntax error (bad indentation)',
    env: () => ({ STEWARD_CONFIG: file('log_level: info\nmodel:\n  name: x\n base_url: y\n') }),
    contains: [(f) => `${f} line 4:`, 'fix the YAML (or JSON) syntax'],
  },
  {
    name: 'YAML syntax error (tab indentation)',
    env: () => ({ STEWARD_CONFIG: file('log_level: info\n\nmodel:\n\tname: x\n') }),
    contains: [(f) => `${f} line 4:`, 'Tabs'],
  },
  {
    name: 'YAML duplicate key',
    env: () => ({ STEWARD_CONFIG: file('log_level: info\nlog_level: debug\n') }),
    contains: [(f) => `${f} line 2:`, 'unique'],
  },
  {
    name: 'JSON syntax error',
    env: () => ({
      STEWARD_CONFIG: file('{\n  "log_level": "info",\n  "model": {"name": "x",,}\n}\n', 'json'),
    }),
    contains: [(f) => `${f} line 3:`],
  },
  {
    name: 'top level is a list',
    env: () => ({ STEWARD_CONFIG: file('- a\n- b\n') }),
    contains: [(f) => f, 'top level must be a mapping'],
  },
  {
    name: 'unknown top-level key',
    env: () => ({ STEWARD_CONFIG: file('log_level: info\n\nlog_levle: debug\n') }),
    contains: [(f) => `${f} line 3, key log_levle`, 'unknown key', `use one of ${knownTopKeys}`],
  },
  {
    name: 'unknown nested key',
    env: () => ({ STEWARD_CONFIG: file('model:\n  name: x\n  temperature: 0.2\n') }),
    contains: [(f) => `${f} line 3, key model.temperature`, 'unknown key', 'use one of base_url, name'],
  },
  {
    name: 'unknown key in a JSON file',
    env: () => ({ STEWARD_CONFIG: file('{\n  "log_level": "info",\n  "bogus": true\n}\n', 'json') }),
    contains: [(f) => `${f} line 3, key bogus`, `use one of ${knownTopKeys}`],
  },
  {
    name: 'telegram.owner_id is a string in the file',
    env: () => ({ STEWARD_CONFIG: file('telegram:\n  owner_id: "abc"\n') }),
    contains: [
      (f) => `${f} line 2, key telegram.owner_id`,
      'must be an integer',
      'use your numeric Telegram user id, e.g. 123456789',
    ],
  },
  {
    name: 'STEWARD_TELEGRAM_OWNER_ID=abc',
    env: () => ({ STEWARD_TELEGRAM_OWNER_ID: 'abc', STEWARD_TELEGRAM_TOKEN: 'tok-1234' }),
    contains: ['config: STEWARD_TELEGRAM_OWNER_ID: must be an integer', 'use your numeric Telegram user id'],
  },
  {
    name: 'the environment is blamed even when the file also sets the key',
    env: () => ({ STEWARD_CONFIG: file('telegram:\n  owner_id: 5\n'), STEWARD_TELEGRAM_OWNER_ID: '-3' }),
    contains: ['config: STEWARD_TELEGRAM_OWNER_ID: must be an integer'],
    excludes: ['line'],
  },
  {
    name: 'STEWARD_TELEGRAM_OWNER_ID=0',
    env: () => ({ STEWARD_TELEGRAM_OWNER_ID: '0' }),
    contains: ['STEWARD_TELEGRAM_OWNER_ID', '>= 1', 'numeric Telegram user id'],
  },
  {
    name: 'owner id too large to be exact',
    env: () => ({ STEWARD_TELEGRAM_OWNER_ID: '123456789012345678901234' }),
    contains: ['STEWARD_TELEGRAM_OWNER_ID', 'numeric Telegram user id'],
  },
  {
    name: 'model given as a string instead of a mapping',
    env: () => ({ STEWARD_CONFIG: file('model: llama3\n') }),
    contains: [(f) => `${f} line 1, key model: must be a mapping of keys`],
  },
  {
    name: 'empty data_dir in the file',
    env: () => ({ STEWARD_CONFIG: file('data_dir: ""\n') }),
    contains: [(f) => `${f} line 1, key data_dir: must not be empty`, 'give a folder path'],
  },
  {
    name: 'bad log level in the environment',
    env: () => ({ STEWARD_LOG_LEVEL: 'verbose' }),
    contains: [
      'config: STEWARD_LOG_LEVEL: is not an allowed value',
      'fatal, error, warn, info, debug, trace, silent',
    ],
  },
  {
    name: 'bad log level in the file',
    env: () => ({ STEWARD_CONFIG: file('model:\n  name: x\nlog_level: loud\n') }),
    contains: [(f) => `${f} line 3, key log_level: is not an allowed value`, 'use one of fatal'],
  },
  ...(
    [
      ['database_url', 'database_url: postgres://u:file-secret-1@h/db\n', 'STEWARD_DATABASE_URL', 1],
      ['model.api_key', 'model:\n  name: x\n  api_key: file-secret-2\n', 'STEWARD_MODEL_API_KEY', 3],
      [
        'telegram.token',
        'telegram:\n  owner_id: 1\n  token: "123:file-secret-3"\n',
        'STEWARD_TELEGRAM_TOKEN',
        3,
      ],
      [
        'matrix.access_token',
        'matrix:\n  access_token: syt_file-secret-4\n  homeserver: https://m.example.org\n',
        'STEWARD_MATRIX_ACCESS_TOKEN',
        2,
      ],
    ] as const
  ).map(
    ([key, text, envVar, line]): ErrorCase => ({
      name: `secret ${key} in the file`,
      env: () => ({ STEWARD_CONFIG: file(text) }),
      contains: [(f) => `${f} line ${line}, key ${key} is a secret`, `set ${envVar}`, 'environment only'],
      excludes: ['file-secret'],
    }),
  ),
  {
    name: 'secret in a JSON file',
    env: () => ({ STEWARD_CONFIG: file('{"model": {"api_key": "sk-json-secret"}}', 'json') }),
    contains: ['key model.api_key is a secret', 'STEWARD_MODEL_API_KEY'],
    excludes: ['sk-json-secret'],
  },
  {
    name: 'Telegram token without owner id',
    env: () => ({ STEWARD_TELEGRAM_TOKEN: '123456:tg-secret-token' }),
    contains: [
      'STEWARD_TELEGRAM_TOKEN is set but STEWARD_TELEGRAM_OWNER_ID is not',
      'STEWARD_TELEGRAM_OWNER_ID=123456789',
    ],
    excludes: ['tg-secret-token'],
  },
  {
    name: 'Telegram API root that is not http',
    env: () => ({
      STEWARD_TELEGRAM_TOKEN: 'tok-1234',
      STEWARD_TELEGRAM_OWNER_ID: '1',
      STEWARD_TELEGRAM_API_ROOT: 'api.telegram.org',
    }),
    contains: ['STEWARD_TELEGRAM_API_ROOT', 'is not an http(s) URL', 'https://api.telegram.org'],
  },
  ...(
    [
      [
        'Telegram webhook without a secret',
        'telegram:\n  owner_id: 1\n  webhook:\n    url: https://bot.example.org/telegram\n    listen_port: 8443\n',
        {},
        [
          (f: string) => `${f} line 3, key telegram.webhook turns webhook mode on`,
          'STEWARD_TELEGRAM_WEBHOOK_SECRET is not set',
          '16-256 characters of A-Z, a-z, 0-9, _ and -',
        ],
      ],
      [
        'Telegram webhook secret with characters Telegram refuses',
        'telegram:\n  owner_id: 1\n  webhook:\n    url: https://bot.example.org/telegram\n    listen_port: 8443\n',
        { STEWARD_TELEGRAM_WEBHOOK_SECRET: 'bad secret!value-0123456789' },
        ['STEWARD_TELEGRAM_WEBHOOK_SECRET is not a valid Telegram secret token', 'openssl rand -hex 32'],
      ],
      [
        'a webhook secret too short to be hard to guess',
        'telegram:\n  owner_id: 1\n  webhook: { url: "https://bot.example.org/telegram", listen_port: 8443 }\n',
        { STEWARD_TELEGRAM_WEBHOOK_SECRET: 'short' },
        ['STEWARD_TELEGRAM_WEBHOOK_SECRET is not a valid Telegram secret token', '16-256 characters'],
      ],
      [
        'Telegram webhook port out of range',
        'telegram:\n  owner_id: 1\n  webhook:\n    url: https://bot.example.org/telegram\n    listen_port: 70000\n',
        { STEWARD_TELEGRAM_WEBHOOK_SECRET: 'good-secret-0123456789' },
        [
          (f: string) => `${f} line 5, key telegram.webhook.listen_port`,
          'must be <= 65535',
          'use a TCP port from 1 to 65535',
        ],
      ],
      [
        'Telegram webhook port that is not a number',
        'telegram:\n  owner_id: 1\n  webhook:\n    url: https://bot.example.org/telegram\n    listen_port: "https"\n',
        { STEWARD_TELEGRAM_WEBHOOK_SECRET: 'good-secret-0123456789' },
        [(f: string) => `${f} line 5, key telegram.webhook.listen_port: must be an integer`],
      ],
      [
        'Telegram webhook without a port',
        'telegram:\n  owner_id: 1\n  webhook:\n    url: https://bot.example.org/telegram\n',
        { STEWARD_TELEGRAM_WEBHOOK_SECRET: 'good-secret-0123456789' },
        [(f: string) => `${f} line 3, key telegram.webhook: must have required property 'listen_port'`],
      ],
      [
        'Telegram webhook URL over plain http',
        'telegram:\n  owner_id: 1\n  webhook:\n    url: http://bot.example.org/telegram\n    listen_port: 8443\n',
        { STEWARD_TELEGRAM_WEBHOOK_SECRET: 'good-secret-0123456789' },
        [(f: string) => `${f} line 4, key telegram.webhook.url`, 'is not an https URL'],
      ],
      [
        'Telegram webhook path without a leading slash',
        'telegram:\n  owner_id: 1\n  webhook:\n    url: https://bot.example.org/telegram\n    listen_port: 8443\n    path: telegram\n',
        { STEWARD_TELEGRAM_WEBHOOK_SECRET: 'good-secret-0123456789' },
        [
          (f: string) => `${f} line 6, key telegram.webhook.path: is not in the expected form`,
          'starting with /',
        ],
      ],
      [
        'unknown key under telegram.webhook',
        'telegram:\n  owner_id: 1\n  webhook:\n    url: https://bot.example.org/telegram\n    listen_port: 8443\n    secret: x\n',
        {},
        ['key telegram.webhook.secret: unknown key', 'use one of url, listen_host, listen_port, path'],
      ],
    ] as const
  ).map(
    ([name, text, extra, contains]): ErrorCase => ({
      name,
      env: () => ({ STEWARD_CONFIG: file(text), STEWARD_TELEGRAM_TOKEN: 'tok-1234', ...extra }),
      contains: [...contains],
    }),
  ),
  {
    name: 'Matrix homeserver in the environment without access token',
    env: () => ({
      STEWARD_MATRIX_HOMESERVER: 'https://m.example.org',
      STEWARD_MATRIX_OWNER: '@me:example.org',
    }),
    contains: ['STEWARD_MATRIX_HOMESERVER turns Matrix on but STEWARD_MATRIX_ACCESS_TOKEN is not set'],
  },
  {
    name: 'Matrix homeserver in the file without access token',
    env: () => ({ STEWARD_CONFIG: file('matrix:\n  homeserver: https://m.example.org\n') }),
    contains: [(f) => `${f} line 2, key matrix.homeserver turns Matrix on`, 'STEWARD_MATRIX_ACCESS_TOKEN'],
  },
  {
    name: 'Matrix without owner',
    env: () => ({
      STEWARD_MATRIX_HOMESERVER: 'https://m.example.org',
      STEWARD_MATRIX_ACCESS_TOKEN: 'syt_secret_tok',
    }),
    contains: ['STEWARD_MATRIX_OWNER is not set', 'e.g. @me:example.org'],
    excludes: ['syt_secret_tok'],
  },
  ...['me', 'me:example.org', '@me', '@me:', '@me example:org', '@:example.org'].map(
    (owner): ErrorCase => ({
      name: `Matrix owner ${JSON.stringify(owner)}`,
      env: () => ({
        STEWARD_MATRIX_HOMESERVER: 'https://m.example.org',
        STEWARD_MATRIX_ACCESS_TOKEN: 'syt_secret_tok',
        STEWARD_MATRIX_OWNER: owner,
      }),
      contains: ['config: STEWARD_MATRIX_OWNER: is not in the expected form', 'use a full Matrix ID'],
    }),
  ),
  {
    name: 'Matrix homeserver that is not http',
    env: () => ({ STEWARD_MATRIX_HOMESERVER: 'matrix.example.org' }),
    contains: ['STEWARD_MATRIX_HOMESERVER', 'is not an http(s) URL', 'https://matrix.example.org'],
  },
  ...['ftp://models.local/v1', 'localhost:11434/v1', 'not a url', 'ws://127.0.0.1:11434/v1'].map(
    (url): ErrorCase => ({
      name: `model base url ${url}`,
      env: () => ({ STEWARD_MODEL_BASE_URL: url }),
      contains: ['config: STEWARD_MODEL_BASE_URL: ', 'is not an http(s) URL', 'http://127.0.0.1:11434/v1'],
    }),
  ),
  {
    name: 'model base url from the file',
    env: () => ({ STEWARD_CONFIG: file('model:\n  base_url: file:///etc/passwd\n') }),
    contains: [(f) => `${f} line 2, key model.base_url`, 'is not an http(s) URL'],
  },
  {
    name: 'model base url with credentials and a newline',
    env: () => ({ STEWARD_MODEL_BASE_URL: 'ftp://user:url-pass@x\nfoo' }),
    contains: ['STEWARD_MODEL_BASE_URL', 'is not an http(s) URL'],
    excludes: ['url-pass'],
  },
  ...(
    [
      ['mysql://root:hunter2-pw@db/app', 'mysql://root:***@db/app'],
      ['http://root:hunter2-pw@db:5432/app', 'http://root:***@db:5432/app'],
      ['postgres://root:hunter2-pw@db:notaport/app', '[redacted]'],
      ['root:hunter2-pw@db:5432/app', '[redacted]'],
      ['postgres://root:hunter2-pw@db/app with spaces', 'postgres://root:***@db/app%20with%20spaces'],
      ['mysql://db/app?user=root&password=hunter2-pw', 'password=***'],
      ['mysql://root:hunter2%40pw@db/app', 'mysql://root:***@db/app'],
      ['hunter2-pw', '[redacted]'],
    ] as const
  ).map(
    ([url, shown]): ErrorCase => ({
      name: `STEWARD_DATABASE_URL=${url}`,
      env: () => ({ STEWARD_DATABASE_URL: url }),
      contains: [
        'config: STEWARD_DATABASE_URL (',
        shown,
        'is not a PostgreSQL URL',
        'postgres://user:password@host',
      ],
      excludes: ['hunter2'],
    }),
  ),
];

describe('loadConfig: errors', () => {
  it.each(errorCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    caseFile = '';
    const message = configError(c.env());
    expect(message).toMatch(/^config: /);
    expect(message).not.toMatch(/[\r\n]/);
    for (const fragment of c.contains) {
      expect(message).toContain(typeof fragment === 'string' ? fragment : fragment(caseFile));
    }
    for (const fragment of c.excludes ?? []) expect(message).not.toContain(fragment);
  });

  it('never prints the value of any secret variable in an error', () => {
    const env: Env = {
      STEWARD_DATABASE_URL: 'mysql://root:secret-db-pw@db/app',
      STEWARD_MODEL_API_KEY: 'secret-api-key',
      STEWARD_TELEGRAM_TOKEN: 'secret-tg-token',
      STEWARD_MATRIX_ACCESS_TOKEN: 'secret-mx-token',
      STEWARD_TELEGRAM_WEBHOOK_SECRET: 'secret-hook-token',
      // Values that get echoed: each must still be free of the secrets above.
      STEWARD_MODEL_BASE_URL: 'ftp://secret-api-key@host',
    };
    const message = configError(env);
    expect(message).not.toContain('secret-');
  });
});

describe('loadConfig: Telegram webhook', () => {
  it('reads telegram.webhook with its defaults and the secret from the environment, listed for redaction', () => {
    const file = writeConfig(
      'telegram:\n  owner_id: 7\n  webhook:\n    url: https://bot.example.org/tg\n    listen_port: 8443\n',
    );
    const config = loadConfig(
      {
        STEWARD_CONFIG: file,
        STEWARD_TELEGRAM_TOKEN: 'tok-1234',
        STEWARD_TELEGRAM_WEBHOOK_SECRET: 'hook-secret_1-0123456789',
      },
      cwd,
    );
    expect(config.telegram?.webhook).toEqual({
      url: 'https://bot.example.org/tg',
      host: '127.0.0.1',
      port: 8443,
      path: '/telegram',
      secret: 'hook-secret_1-0123456789',
    });
    expect(config.secrets).toContain('hook-secret_1-0123456789');
  });

  it('takes listen_host and path from the file; without a webhook Telegram polls', () => {
    const file = writeConfig(
      'telegram:\n  owner_id: 7\n  webhook:\n    url: https://bot.example.org/tg\n    listen_host: 0.0.0.0\n    listen_port: 80\n    path: /hook/abc\n',
    );
    const env = {
      STEWARD_CONFIG: file,
      STEWARD_TELEGRAM_TOKEN: 'tok-1234',
      STEWARD_TELEGRAM_WEBHOOK_SECRET: 'sixteen-chars-ok',
    };
    expect(loadConfig(env, cwd).telegram?.webhook).toMatchObject({
      host: '0.0.0.0',
      port: 80,
      path: '/hook/abc',
    });
    const polling = loadConfig({ STEWARD_TELEGRAM_TOKEN: 'tok-1234', STEWARD_TELEGRAM_OWNER_ID: '7' }, cwd);
    expect(polling.telegram?.webhook).toBeUndefined();
  });
});

describe('requireDefaultRoute', () => {
  it('returns the configured model on the default endpoint', () => {
    expect(requireDefaultRoute(loadConfig({ STEWARD_MODEL: 'llama3.1:8b' }, cwd))).toEqual([
      { provider: 'default', model: 'llama3.1:8b' },
    ]);
    const file = writeConfig('model:\n  name: from-file\n');
    expect(requireDefaultRoute(loadConfig({ STEWARD_CONFIG: file }, cwd))).toEqual([
      { provider: 'default', model: 'from-file' },
    ]);
  });

  it('takes routes and providers from the file; STEWARD_MODEL in the environment wins', () => {
    const file = writeConfig(
      [
        'providers:',
        '  cloud: { kind: anthropic, base_url: "https://api.example.com/", api_key_env: CLOUD_KEY }',
        'routes:',
        '  default:',
        '    - { provider: default, model: small }',
        '    - { provider: cloud, model: big }',
        'prices:',
        '  big: { input_per_mtok: 3, output_per_mtok: 15 }',
        'loop: { max_steps: 8 }',
      ].join('\n'),
    );
    const config = loadConfig({ STEWARD_CONFIG: file, CLOUD_KEY: 'cloud-secret-key' }, cwd);
    expect(requireDefaultRoute(config)).toEqual([
      { provider: 'default', model: 'small' },
      { provider: 'cloud', model: 'big' },
    ]);
    expect(config.models.providers.cloud).toEqual({
      kind: 'anthropic',
      baseUrl: 'https://api.example.com',
      apiKey: 'cloud-secret-key',
    });
    expect(config.models.prices.big).toEqual({ inputPerMTok: 3, outputPerMTok: 15 });
    expect(config.models.loop).toMatchObject({ maxSteps: 8, maxRepeats: 3, parallelTools: 4 });
    expect(config.secrets).toContain('cloud-secret-key');
    const overridden = loadConfig(
      { STEWARD_CONFIG: file, CLOUD_KEY: 'k-123', STEWARD_MODEL: 'envmodel' },
      cwd,
    );
    expect(requireDefaultRoute(overridden)).toEqual([{ provider: 'default', model: 'envmodel' }]);
  });

  it.each([
    [
      'routes:\n  default:\n    - { provider: nowhere, model: m }\n',
      /routes.default: entry 1 names provider "nowhere", which is not defined/,
    ],
    [
      'providers:\n  cloud: { kind: anthropic, base_url: "https://x", api_key_env: NOT_SET_ANYWHERE }\n',
      /names NOT_SET_ANYWHERE, which is not set/,
    ],
    ['providers:\n  default: { kind: openai, base_url: "https://x" }\n', /the name "default" is taken/],
    [
      'providers:\n  cloud: { kind: gemini, base_url: "https://x" }\n',
      /key providers.cloud.kind: is not an allowed value/,
    ],
    ['loop: { max_steps: 1 }\n', /loop.max_steps: .*2 to 100/],
  ])('refuses a bad model section: %s', (text, expected) => {
    const file = writeConfig(text);
    expect(() => loadConfig({ STEWARD_CONFIG: file }, cwd)).toThrow(expected);
  });

  it('throws a one-line ConfigError naming STEWARD_MODEL with an example', () => {
    const config = loadConfig({}, cwd);
    expect(() => requireDefaultRoute(config)).toThrow(ConfigError);
    let message = '';
    try {
      requireDefaultRoute(config);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^config: STEWARD_MODEL is not set/);
    expect(message).toMatch(/e\.g\. STEWARD_MODEL=\S+/);
    expect(message).not.toMatch(/[\r\n]/);
  });
});

describe('maskUrl', () => {
  it.each([
    ['postgres://steward:s3cret-pw@db:5432/steward', 'postgres://steward:***@db:5432/steward'],
    ['postgresql://u:p%40ss-word@h/db', 'postgresql://u:***@h/db'],
    ['postgres://steward@db/steward', 'postgres://steward@db/steward'],
    ['postgres://db/steward', 'postgres://db/steward'],
    [
      'postgres://db/steward?password=s3cret-pw&sslmode=require',
      'postgres://db/steward?password=***&sslmode=require',
    ],
    ['https://user:s3cret-pw@example.org/v1', 'https://user:***@example.org/v1'],
    ['steward:s3cret-pw@db:5432/steward', '[redacted]'],
    ['not a url s3cret-pw', '[redacted]'],
    ['', '[redacted]'],
  ])('%s -> %s', (raw, masked) => {
    expect(maskUrl(raw)).toBe(masked);
    expect(maskUrl(raw)).not.toContain('s3cret');
    expect(maskUrl(raw)).not.toContain('ss-word');
  });
});

describe('secretValues', () => {
  it('lists each secret variable and nothing else', () => {
    const env: Env = {
      STEWARD_MODEL_API_KEY: 'sk-abcdef',
      STEWARD_TELEGRAM_TOKEN: '12345:telegram',
      STEWARD_MATRIX_ACCESS_TOKEN: 'syt_matrix',
      STEWARD_MODEL: 'llama3.1:8b',
      STEWARD_DATA_DIR: '/var/lib/steward',
    };
    expect(secretValues(env).sort()).toEqual(['12345:telegram', 'sk-abcdef', 'syt_matrix']);
    expect(SECRET_ENV_VARS).toEqual(
      expect.arrayContaining([
        'STEWARD_DATABASE_URL',
        'STEWARD_MODEL_API_KEY',
        'STEWARD_TELEGRAM_TOKEN',
        'STEWARD_MATRIX_ACCESS_TOKEN',
      ]),
    );
  });

  it.each([
    ['plain password', 'postgres://u:plainpass@h/db', ['plainpass']],
    [
      'URL-encoded password: decoded and raw',
      'postgres://u:p%40ss%2Fword@h/db',
      ['p@ss/word', 'p%40ss%2Fword'],
    ],
    ['lowercase escapes as written', 'postgres://u:p%2fword@h/db', ['p/word', 'p%2fword', 'p%2Fword']],
    ['a literal percent sign', 'postgres://u:100%pass@h/db', ['100%pass', '100%25pass']],
    ['password in the query', 'postgres://h/db?password=querypass', ['querypass']],
  ])('database URL, %s', (_label, url, expected) => {
    const values = secretValues({ STEWARD_DATABASE_URL: url });
    expect(values).toContain(url);
    for (const value of expected) expect(values).toContain(value);
  });

  it('lists an encoded form only once when it equals the raw one', () => {
    const values = secretValues({ STEWARD_DATABASE_URL: 'postgres://u:plainpass@h/db' });
    expect(values.filter((v) => v === 'plainpass')).toHaveLength(1);
  });

  it('ignores values shorter than 4 characters, and empty ones', () => {
    expect(
      secretValues({
        STEWARD_MODEL_API_KEY: 'abc',
        STEWARD_TELEGRAM_TOKEN: '',
        STEWARD_MATRIX_ACCESS_TOKEN: 'abcd',
        STEWARD_DATABASE_URL: 'postgres://u:pw@h/db',
      }),
    ).toEqual(['postgres://u:pw@h/db', 'abcd']);
  });

  it('sorts longest first', () => {
    const values = secretValues({
      STEWARD_MODEL_API_KEY: 'medium-key',
      STEWARD_TELEGRAM_TOKEN: 'a-much-longer-telegram-bot-token',
      STEWARD_MATRIX_ACCESS_TOKEN: 'shrt',
      STEWARD_DATABASE_URL: 'postgres://u:dbpassword@h/db',
    });
    expect(values).toEqual([...values].sort((a, b) => b.length - a.length));
    expect(values[0]).toBe('a-much-longer-telegram-bot-token');
    expect(values.at(-1)).toBe('shrt');
  });

  it('tolerates an unparsable database URL', () => {
    expect(secretValues({ STEWARD_DATABASE_URL: 'not a url' })).toEqual(['not a url']);
  });
});

describe('redact', () => {
  it.each([
    ['every occurrence', 'tok tok-123 tok-123 x', ['tok-123'], 'tok [redacted] [redacted] x'],
    ['several secrets', 'a=alpha1 b=beta22', ['alpha1', 'beta22'], 'a=[redacted] b=[redacted]'],
    [
      'a URL before its password',
      'url postgres://u:pass1@h',
      ['pass1', 'postgres://u:pass1@h'],
      'url [redacted]',
    ],
    ['the longer of overlapping secrets', 'abcdefgh', ['abcd', 'abcdefgh'], '[redacted]'],
    ['nothing without secrets', 'plain text', [], 'plain text'],
    ['nothing with an empty secret', 'plain text', [''], 'plain text'],
    ['special regex characters literally', 'k=a.b*c+d?', ['a.b*c+d?'], 'k=[redacted]'],
  ])('%s', (_label, text, secrets, expected) => {
    expect(redact(text, secrets)).toBe(expected);
  });

  it('does not reorder the caller’s list', () => {
    const secrets = ['abcd', 'abcdefgh'];
    redact('abcdefgh', secrets);
    expect(secrets).toEqual(['abcd', 'abcdefgh']);
  });

  it('redacts every secret a loaded config lists', () => {
    const config = loadConfig(
      { STEWARD_DATABASE_URL: 'postgres://u:p%40ss-word@h/db', STEWARD_MODEL_API_KEY: 'sk-live-key' },
      cwd,
    );
    const text = 'url=postgres://u:p%40ss-word@h/db pw=p@ss-word enc=p%40ss-word key=sk-live-key';
    expect(redact(text, config.secrets)).toBe('url=[redacted] pw=[redacted] enc=[redacted] key=[redacted]');
  });
});
