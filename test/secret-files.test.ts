// Every secret variable may come from a file as NAME_FILE: the content, less its trailing newline.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config, type Env, loadConfig } from '../src/config/load.ts';
import { SECRET_ENV_VARS, secretValues, withSecretFiles } from '../src/config/secrets.ts';
import { ConfigError } from '../src/errors.ts';

let root: string;
let cwd: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'steward-secret-files-'));
  cwd = join(root, 'cwd');
  mkdirSync(cwd);
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

let count = 0;
function secretFile(content: string): string {
  count += 1;
  const path = join(root, `secret-${count}`);
  writeFileSync(path, content);
  return path;
}

function configFile(text: string): string {
  count += 1;
  const path = join(root, `steward-${count}.yaml`);
  writeFileSync(path, text);
  return path;
}

function failure(env: Env): string {
  try {
    loadConfig(env, cwd);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

const WEBHOOK = 'telegram:\n  webhook:\n    url: https://bot.example.org/telegram\n    listen_port: 8443\n';
const MATRIX = 'matrix:\n  homeserver: https://matrix.example.org\n  owner: "@me:example.org"\n';

describe('each secret variable as NAME_FILE', () => {
  it.each<[string, string, Env, (c: Config) => string | undefined]>([
    ['STEWARD_MODEL_API_KEY', 'sk-from-a-file', {}, (c) => c.model.apiKey],
    [
      'STEWARD_TELEGRAM_TOKEN',
      '123:telegram-file',
      { STEWARD_TELEGRAM_OWNER_ID: '7' },
      (c) => c.telegram?.token,
    ],
    [
      'STEWARD_TELEGRAM_WEBHOOK_SECRET',
      'webhook-secret-from-file-0123',
      { STEWARD_TELEGRAM_TOKEN: '123:tok', STEWARD_TELEGRAM_OWNER_ID: '7', STEWARD_CONFIG: 'WEBHOOK' },
      (c) => c.telegram?.webhook?.secret,
    ],
    [
      'STEWARD_MATRIX_ACCESS_TOKEN',
      'syt_matrix_from_file',
      { STEWARD_CONFIG: 'MATRIX' },
      (c) => c.matrix?.accessToken,
    ],
    [
      'STEWARD_DATABASE_URL',
      'postgres://steward:pw-from-file@127.0.0.1:5432/steward',
      {},
      (c) => c.databaseUrl,
    ],
  ])('%s_FILE gives %s', (name, secret, extra, pick) => {
    const env: Env = { ...extra, [`${name}_FILE`]: secretFile(`${secret}\n`) };
    if (env.STEWARD_CONFIG === 'WEBHOOK') env.STEWARD_CONFIG = configFile(WEBHOOK);
    if (env.STEWARD_CONFIG === 'MATRIX') env.STEWARD_CONFIG = configFile(MATRIX);
    const config = loadConfig(env, cwd);
    expect(pick(config)).toBe(secret);
    expect(config.secrets).toContain(secret); // redacted wherever text leaves the process
  });

  it('covers every name SECRET_ENV_VARS lists', () => {
    for (const name of SECRET_ENV_VARS) {
      const env = withSecretFiles({ [`${name}_FILE`]: secretFile('s3cret-value') }, SECRET_ENV_VARS, cwd);
      expect(env[name]).toBe('s3cret-value');
      expect(env[`${name}_FILE`]).toBeUndefined();
    }
  });

  it("a provider's api_key_env may come from a file too", () => {
    const file = configFile(
      'providers:\n  cloud: { kind: anthropic, base_url: "https://api.example.com", api_key_env: CLOUD_KEY }\n',
    );
    const config = loadConfig({ STEWARD_CONFIG: file, CLOUD_KEY_FILE: secretFile('ck-file-key\n') }, cwd);
    expect(config.models.providers.cloud?.apiKey).toBe('ck-file-key');
    expect(config.secrets).toContain('ck-file-key');
  });
});

describe('the file content', () => {
  it.each([
    ['token\n', 'token'],
    ['token\r\n', 'token'],
    ['token\n\n', 'token'],
    ['token', 'token'],
    ['  token  \n', '  token  '], // spaces are the operator's; only line ends are trimmed
  ])('%j is the secret %j', (content, want) => {
    const env = withSecretFiles({ STEWARD_MODEL_API_KEY_FILE: secretFile(content) }, SECRET_ENV_VARS, cwd);
    expect(env.STEWARD_MODEL_API_KEY).toBe(want);
  });

  it('a relative path is relative to the working directory', () => {
    writeFileSync(join(cwd, 'key.txt'), 'relative-key\n');
    const config = loadConfig({ STEWARD_MODEL_API_KEY_FILE: 'key.txt' }, cwd);
    expect(config.model.apiKey).toBe('relative-key');
  });
});

describe('one-line errors that never show the secret', () => {
  it('both NAME and NAME_FILE set: names both and the fix', () => {
    const message = failure({
      STEWARD_TELEGRAM_TOKEN: '123:env-token-value',
      STEWARD_TELEGRAM_TOKEN_FILE: secretFile('123:file-token-value\n'),
      STEWARD_TELEGRAM_OWNER_ID: '7',
    });
    expect(message).toMatch(/both STEWARD_TELEGRAM_TOKEN and STEWARD_TELEGRAM_TOKEN_FILE are set; unset one/);
    expect(message).not.toMatch(/env-token-value|file-token-value/);
    expect(message).not.toContain('\n');
  });

  it.each([
    ['a missing file', () => join(root, 'no-such-file'), /ENOENT/],
    ['a directory', () => root, /EISDIR/],
  ])('%s: names the path and the reason', (_label, path, reason) => {
    const full = path();
    const message = failure({ STEWARD_MATRIX_ACCESS_TOKEN_FILE: full });
    expect(message).toContain(`STEWARD_MATRIX_ACCESS_TOKEN_FILE names ${full}, which cannot be read`);
    expect(message).toMatch(reason);
    expect(message).not.toContain('\n');
  });

  it('an empty file is refused rather than taken as no secret', () => {
    const path = secretFile('\n');
    expect(failure({ STEWARD_MODEL_API_KEY_FILE: path })).toBe(
      `config: STEWARD_MODEL_API_KEY_FILE names ${path}, which is empty; put the secret in it`,
    );
  });

  it('a later error about a secret read from a file is redacted', () => {
    const message = failure({
      STEWARD_TELEGRAM_WEBHOOK_SECRET_FILE: secretFile('bad secret with spaces!\n'),
      STEWARD_TELEGRAM_TOKEN_FILE: secretFile('123:tok-hidden-value\n'),
      STEWARD_TELEGRAM_OWNER_ID: '7',
      STEWARD_CONFIG: configFile(WEBHOOK),
    });
    expect(message).toMatch(/STEWARD_TELEGRAM_WEBHOOK_SECRET is not a valid Telegram secret token/);
    expect(message).not.toMatch(/bad secret with spaces|tok-hidden-value/);
  });

  it('a database URL from a file that is not PostgreSQL is shown masked', () => {
    const message = failure({ STEWARD_DATABASE_URL_FILE: secretFile('mysql://u:hunter2-file@db/x\n') });
    expect(message).toMatch(/is not a PostgreSQL URL/);
    expect(message).not.toContain('hunter2-file');
  });
});

describe('secretValues reads NAME_FILE too (for redaction before or without loadConfig)', () => {
  it('includes the file content and ignores an unreadable file', () => {
    const values = secretValues({
      STEWARD_MODEL_API_KEY_FILE: secretFile('sk-redact-me\n'),
      STEWARD_TELEGRAM_TOKEN_FILE: join(root, 'missing'),
    });
    expect(values).toEqual(['sk-redact-me']);
  });

  it('both values are redacted when both are set', () => {
    const values = secretValues({
      STEWARD_MODEL_API_KEY: 'sk-env-value',
      STEWARD_MODEL_API_KEY_FILE: secretFile('sk-file-value'),
    });
    expect(values.sort()).toEqual(['sk-env-value', 'sk-file-value']);
  });
});
