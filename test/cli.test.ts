import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runSteward } from './support/run-steward.ts';
import { reply, type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { freshPostgres, postgresUrl, tempDir } from './support/services.ts';

const pgAdmin = postgresUrl();
const lines = (text: string) => text.split('\n').filter((l) => l !== '');

let data: ReturnType<typeof tempDir>;
beforeEach(() => {
  data = tempDir();
});
afterEach(() => data.remove());
const base = () => ({ STEWARD_DATA_DIR: data.path });

describe('steward command line', () => {
  it('prints usage and exits 2 for no command, an unknown command or an unknown flag', async () => {
    for (const args of [[], ['bogus'], ['chat', '--bogus'], ['migrate', 'extra']]) {
      const run = await runSteward(args, { env: base() });
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout + run.stderr).toContain('Usage: steward <command>');
    }
    const unknown = await runSteward(['bogus'], { env: base() });
    expect(unknown.stderr.split('\n')[0]).toBe("steward: unknown command 'bogus'");
    const flag = await runSteward(['chat', '--bogus'], { env: base() });
    expect(flag.stderr.split('\n')[0]).toBe("steward: unknown option '--bogus' for steward chat");
    const help = await runSteward(['--help'], { env: base() });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/start .*\n.*chat .*\n.*migrate .*\n.*doctor /);
  });

  it('names STEWARD_MODEL in one line when it is unset', async () => {
    const run = await runSteward(['chat'], { env: base(), input: 'hello\n' });
    expect(run.code).toBe(2);
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(/^steward: config: STEWARD_MODEL is not set; .*e\.g\. STEWARD_MODEL=/),
    ]);
    expect(run.stdout).toBe('');
  });

  it('steward start with no channel says how to configure one and exits 2', async () => {
    const run = await runSteward(['start'], { env: base() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/STEWARD_TELEGRAM_TOKEN[\s\S]*STEWARD_MATRIX_HOMESERVER[\s\S]*steward chat/);
  });

  it('names the file, line and key of a bad config file', async () => {
    const file = join(data.path, 'steward.yaml');
    writeFileSync(file, 'log_level: info\nmodel:\n  base_url: http://127.0.0.1:1/v1\n  nmae: llama\n');
    const unknown = await runSteward(['doctor'], { env: { ...base(), STEWARD_CONFIG: file } });
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toContain(`${file} line 4, key model.nmae: unknown key`);

    writeFileSync(file, 'log_level: info\nmodel: base_url: http://x\ndata_dir: ./d\n');
    const broken = await runSteward(['migrate'], { env: { ...base(), STEWARD_CONFIG: file } });
    expect(broken.code).toBe(2);
    expect(lines(broken.stderr)).toEqual([expect.stringContaining(`${file} line 2`)]);
  });

  it('reports an unreachable database in one line without its password, and exits non-zero', async () => {
    const url = 'postgres://steward:hunter2-secret@127.0.0.1:1/steward';
    const run = await runSteward(['migrate'], { env: { ...base(), STEWARD_DATABASE_URL: url } });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([
      'steward: database: cannot connect to postgres://steward:***@127.0.0.1:1/steward: connection refused; check STEWARD_DATABASE_URL and that PostgreSQL is running',
    ]);
    expect(run.stdout + run.stderr).not.toContain('hunter2');
  });

  it('migrates the embedded database; the second run changes nothing', async () => {
    const first = await runSteward(['migrate'], { env: base() });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('applied 0001_initial.sql');
    const second = await runSteward(['migrate'], { env: base() });
    expect(second.code).toBe(0);
    expect(second.stdout).not.toContain('applied');
    expect(second.stdout).toContain('nothing to apply');
  });
});

describe.skipIf(!pgAdmin)('steward against PostgreSQL', () => {
  let db: Awaited<ReturnType<typeof freshPostgres>>;
  beforeAll(async () => {
    db = await freshPostgres(pgAdmin as string);
  });
  afterAll(async () => db.drop());

  it('migrates; the second run changes nothing', async () => {
    const first = await runSteward(['migrate'], { env: { ...base(), STEWARD_DATABASE_URL: db.url } });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('applied 0001_initial.sql');
    expect(first.stdout).not.toContain('steward-test');
    const second = await runSteward(['migrate'], { env: { ...base(), STEWARD_DATABASE_URL: db.url } });
    expect(second.stdout).toContain('nothing to apply');
  });

  it('names wrong credentials in one line, without the password', async () => {
    const wrong = new URL(db.url);
    wrong.password = 'not-the-password';
    const run = await runSteward(['migrate'], { env: { ...base(), STEWARD_DATABASE_URL: wrong.toString() } });
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(/authentication failed \(wrong user or password\)/),
    ]);
    expect(run.stderr).not.toContain('not-the-password');
  });
});

describe('steward chat against an OpenAI-compatible endpoint', () => {
  let model: ScriptedModel;
  afterEach(async () => model?.close());
  const env = (baseUrl: string) => ({
    ...base(),
    STEWARD_MODEL_BASE_URL: baseUrl,
    STEWARD_MODEL: 'test-model',
  });

  it("printf 'hello\\n' | steward chat prints the reply", async () => {
    model = await startScriptedModel([reply('Hello there! How can I help?')]);
    const run = await runSteward(['chat'], { env: env(model.baseUrl), input: 'hello\n' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('Hello there! How can I help?\n');
    expect(run.code).toBe(0);
    expect(model.requests[0]).toMatchObject({ model: 'test-model', stream: true });
    const tools = (model.requests[0]?.tools ?? []) as Array<{ function: { name: string } }>;
    expect(tools.map((t) => t.function.name).sort()).toEqual([
      'calculate',
      'convert_time',
      'current_time',
      'load_skill',
      'retrieve_output',
      'shell',
      'web_fetch',
      'write_file',
    ]);
  });

  it('answers piped lines in order, skips blank ones, and remembers across runs through the log', async () => {
    model = await startScriptedModel([reply('one'), reply('two'), reply('three')]);
    const first = await runSteward(['chat'], { env: env(model.baseUrl), input: 'first\r\n\n  \nsecond\n' });
    expect(first.stdout).toBe('one\ntwo\n');
    const second = await runSteward(['chat'], { env: env(model.baseUrl), input: 'third' });
    expect(second.stdout).toBe('three\n');
    const sent = ((model.requests[2]?.messages ?? []) as Array<{ content: string }>).slice(1);
    expect(sent.map((m) => m.content)).toEqual(['first', 'one', 'second', 'two', 'third']);
  });

  it('manages digests from the console: a bad cron gets a one-line correction', async () => {
    model = await startScriptedModel([]);
    const run = await runSteward(['chat'], {
      env: env(model.baseUrl),
      input:
        '/digest add "30 7 * * 1-5" Europe/Oslo here markets-digest\n/digest add "61 7 * * *" UTC here x\n/digest list\n',
    });
    expect(run.code).toBe(0);
    const out = run.stdout.split('\n');
    expect(out[0]).toMatch(/markets-digest/);
    expect(out.some((l) => /61/.test(l) && /minute|cron/i.test(l))).toBe(true);
    expect(run.stdout).toMatch(/30 7 \* \* 1-5/);
    expect(model.requests).toHaveLength(0);
  });

  it('names the URL of an unreachable model in one line per message and keeps going', async () => {
    const closed = 'http://127.0.0.1:1/v1';
    const run = await runSteward(['chat'], { env: env(closed), input: 'are you there?\nstill there?\n' });
    expect(run.code).toBe(0);
    const errors = lines(run.stderr);
    expect(errors).toHaveLength(2);
    for (const line of errors) {
      expect(line).toMatch(
        /^steward: model: cannot reach http:\/\/127\.0\.0\.1:1\/v1\/chat\/completions: connection refused;/,
      );
    }
  });

  it('steward doctor checks the database and the model endpoint, one line each', async () => {
    model = await startScriptedModel([], ['test-model', 'other']);
    const ok = await runSteward(['doctor'], { env: env(model.baseUrl) });
    expect(ok.code).toBe(0);
    expect(lines(ok.stdout)).toEqual([
      'ok   config    environment only (no STEWARD_CONFIG)',
      expect.stringMatching(/^ok {3}database {2}embedded; created at .* on first use$/),
      expect.stringMatching(/^(ok {2}|warn) shell {5}bash .* at \//),
      `ok   model     ${model.baseUrl} serves test-model`,
      'warn channels  none configured; steward start needs Telegram or Matrix',
    ]);
    const missing = await runSteward(['doctor'], { env: { ...env(model.baseUrl), STEWARD_MODEL: 'absent' } });
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('FAIL model     ');
    expect(missing.stdout).toContain('does not list model "absent"; it serves test-model, other');

    // A link where the database goes is what start would refuse, not a database yet to be made.
    symlinkSync('gone', join(data.path, 'pg'));
    try {
      const linked = await runSteward(['doctor'], { env: env(model.baseUrl) });
      expect(linked.code).toBe(1);
      expect(lines(linked.stdout)[1]).toMatch(/^FAIL database .*pg: it is a symbolic link \(to \/.*\/gone\)/);
    } finally {
      rmSync(join(data.path, 'pg'));
    }
  });
});

describe('steward doctor and the sensitive route', () => {
  it('warns when the sensitive route leaves this machine, and not when it stays on loopback', async () => {
    const file = join(data.path, 'steward.yaml');
    const config = (url: string) =>
      [
        'providers:',
        `  private: { kind: openai, base_url: "${url}" }`,
        'routes:',
        '  local:',
        '    - { provider: private, model: small }',
        'sensitive_tool_route: local',
      ].join('\n');
    writeFileSync(file, config('https://models.example.com/v1'));
    const remote = await runSteward(['doctor'], { env: { ...base(), STEWARD_CONFIG: file } });
    expect(remote.stdout).toContain(
      'warn sensitive sensitive_tool_route "local" reaches beyond this machine (https://models.example.com/v1)',
    );
    writeFileSync(file, config('http://127.0.0.1:11434/v1'));
    const local = await runSteward(['doctor'], { env: { ...base(), STEWARD_CONFIG: file } });
    expect(local.stdout).toContain('ok   sensitive sensitive_tool_route "local" stays on loopback');
  });
});
