// What a process loads follows from what it does: a command that needs no database loads no
// driver, and a configuration loads only the parts it uses (no Matrix SDK for a Telegram-only
// steward, no pg-boss on PGlite, no MCP SDK without MCP servers, no Readability before a page).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { tempDir } from './support/services.ts';
import { startTelegramEmulator, type TelegramEmulator, waitFor } from './support/telegram-emulator.ts';

const BIN = resolve(import.meta.dirname, '../bin/steward.js');
const HOOK = resolve(import.meta.dirname, 'support/record-modules.mjs');

const DB_DRIVERS = ['@electric-sql/pglite', 'pg', 'pg-boss'];
const UNUSED_BY_DEFAULT = [
  'matrix-bot-sdk',
  '@matrix-org/matrix-sdk-crypto-wasm',
  'fake-indexeddb',
  '@modelcontextprotocol/sdk',
  '@mozilla/readability',
  'linkedom',
  'dockerode',
];

/** The packages (node_modules names) and steward files among loaded module URLs. */
function summarize(urls: string[]) {
  const packages = new Set<string>();
  const own = new Set<string>();
  for (const url of urls) {
    const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//)?.[1];
    if (pkg) packages.add(pkg);
    else if (url.startsWith('file:'))
      own.add(url.slice(url.indexOf('/src/') >= 0 ? url.indexOf('/src/') + 1 : 0));
  }
  return { packages, own, urls };
}

describe('lazy loading', () => {
  let dir: ReturnType<typeof tempDir>;
  let model: ScriptedModel | undefined;
  let emulator: TelegramEmulator | undefined;

  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await model?.close();
    model = undefined;
    await emulator?.stop();
    emulator = undefined;
    dir.remove();
  });

  /** Runs steward with the recording hook; resolves with what it loaded once it exits. */
  function run(
    args: string[],
    env: Record<string, string>,
    input = '',
    untilKilled?: (kill: () => void) => void,
  ) {
    const file = join(dir.path, `modules-${args[0]}.txt`);
    const child = spawn(process.execPath, ['--import', HOOK, BIN, ...args], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir.path,
        STEWARD_DATA_DIR: join(dir.path, 'data'),
        ...env,
        STEWARD_TEST_MODULES_FILE: file,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stdin.end(input);
    untilKilled?.(() => child.kill('SIGTERM'));
    return new Promise<{ code: number | null; stdout: string } & ReturnType<typeof summarize>>((done) => {
      child.on('close', (code) =>
        done({ code, stdout, ...summarize(readFileSync(file, 'utf8').split('\n')) }),
      );
    });
  }

  /** An emulator for the owner 4242, and the environment of a steward start against it. */
  async function telegramStart(modelUrl: string) {
    emulator = await startTelegramEmulator();
    const tg = emulator;
    const env = {
      STEWARD_MODEL_BASE_URL: modelUrl,
      STEWARD_MODEL: 'test-model',
      STEWARD_TELEGRAM_TOKEN: tg.token,
      STEWARD_TELEGRAM_OWNER_ID: '4242',
      STEWARD_TELEGRAM_API_ROOT: tg.apiRoot,
    };
    return { tg, env };
  }

  it('policy check opens no database and loads no driver, channel or model client', async () => {
    const result = await run(['policy', 'check', '--', 'ls', '-la'], {});
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ verdict: 'allow' });
    for (const pkg of [...DB_DRIVERS, ...UNUSED_BY_DEFAULT, 'grammy', 'undici', 'pino']) {
      expect(result.packages, pkg).not.toContain(pkg);
    }
    expect([...result.own].filter((f) => f.startsWith('src/store/'))).toEqual([]);
  });

  it('the usage list loads no command', async () => {
    const result = await run(['--help'], {});
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('policy');
    expect(
      [...result.own].filter(
        (f) => f.includes('/cli/commands/') && !f.endsWith('/index.ts') && !f.endsWith('/synopses.ts'),
      ),
    ).toEqual([]);
    expect(result.packages.size).toBe(0);
  });

  it('steward chat on PGlite loads PGlite, and neither pg, pg-boss, grammY nor an unused part', async () => {
    model = await startScriptedModel([reply('pong')]);
    const result = await run(
      ['chat'],
      { STEWARD_MODEL_BASE_URL: model.baseUrl, STEWARD_MODEL: 'test-model' },
      'ping\n',
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('pong');
    expect(result.packages).toContain('@electric-sql/pglite');
    for (const pkg of ['pg', 'pg-boss', 'grammy', ...UNUSED_BY_DEFAULT])
      expect(result.packages, pkg).not.toContain(pkg);
  });

  it('polling and a command the core answers itself load no model client and no schema compiler', async () => {
    // No model answers here: a model request would fail the run, not pass it.
    const { tg, env } = await telegramStart('http://127.0.0.1:9/v1');
    const result = await run(['start'], env, '', (kill) => {
      void (async () => {
        await tg.user(4242).say('/help');
        await waitFor(
          () => tg.botMessages(4242).find((m) => m.text.includes('/help')),
          'the help text',
          30_000,
        );
        kill();
      })();
    });
    expect(result.code).toBe(0);
    expect(result.packages).toContain('grammy');
    // undici comes with the first model request or fetch; ajv's compiler with the first tool call.
    expect(result.packages).not.toContain('undici');
    // Node's own copy loads when node:http is imported as a module (the webhook server does).
    expect(result.urls).toContain('node:internal/modules/esm/loader');
    expect(result.urls).not.toContain('node:internal/deps/undici/undici');
    expect(result.urls.filter((u) => /node_modules\/ajv\/dist\/(ajv|core)\.js$/.test(u))).toEqual([]);
  });

  it('a Telegram-only steward start loads grammY and none of Matrix, MCP or Readability', async () => {
    model = await startScriptedModel([reply('pong')]);
    const { tg, env } = await telegramStart(model.baseUrl);
    const result = await run(['start'], env, '', (kill) => {
      void (async () => {
        await tg.user(4242).say('ping');
        await waitFor(() => tg.botMessages(4242).find((m) => m.text === 'pong'), 'the reply', 30_000);
        kill();
      })();
    });
    expect(result.code).toBe(0);
    expect(result.packages).toContain('grammy');
    for (const pkg of ['pg', 'pg-boss', ...UNUSED_BY_DEFAULT])
      expect(result.packages, pkg).not.toContain(pkg);
  });
});
