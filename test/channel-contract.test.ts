// The channel contract: one set of cases, run against every channel through a driver that plays
// the humans on that platform (test/support/contract-*.ts). Console in process, Telegram against
// the Bot API emulator, Matrix against the test Synapse (required under CI=true, skipped with the
// printed reason elsewhere). The real assistant, permission chain, shell tool and store throughout;
// the scripted model is the only double.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { consoleDriver } from './support/contract-console.ts';
import type { ChannelDriver } from './support/contract-drivers.ts';
import { matrixDriver } from './support/contract-matrix.ts';
import { telegramDriver } from './support/contract-telegram.ts';
import { reply, type ScriptedModel, type ScriptStep, startScriptedModel } from './support/scripted-model.ts';
import { matrixEnv, tempDir } from './support/services.ts';

const matrix = matrixEnv();
const suites: Array<{ name: string; driver: ChannelDriver | undefined }> = [
  { name: 'console', driver: consoleDriver() },
  { name: 'telegram', driver: telegramDriver() },
  { name: 'matrix', driver: matrix && matrixDriver(matrix) },
];

const shell = (command: string): ScriptStep => ({
  chunks: [],
  toolCalls: [{ name: 'shell', argumentChunks: [JSON.stringify({ command })] }],
});
const userTexts = (model: ScriptedModel) =>
  model.requests.flatMap((r) =>
    ((r.messages ?? []) as Array<{ role: string; content: unknown }>)
      .filter((m) => m.role === 'user')
      .map((m) => String(m.content)),
  );

describe.each(suites)('channel contract: $name', ({ driver: maybe }) => {
  if (!maybe) {
    it.skip('needs the test Synapse: run eval "$(bash scripts/test-services.sh)" first');
    return;
  }
  const driver = maybe;
  let model: ScriptedModel | undefined;
  let dir: ReturnType<typeof tempDir> | undefined;
  let workspace = '';

  beforeAll(() => driver.prepare());
  afterEach(async () => {
    await driver.stop();
    await model?.close();
    model = undefined;
    dir?.remove();
    dir = undefined;
  });
  afterAll(() => driver.stop());

  const begin = async (script: ScriptStep[], files: Record<string, string> = {}) => {
    dir = tempDir('steward-contract-');
    workspace = join(dir.path, 'workspace');
    mkdirSync(workspace);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(workspace, name), text);
    model = await startScriptedModel(script);
    await driver.start(model, workspace);
    return model;
  };

  it("1: the owner's message gets the model's reply, once", async () => {
    const m = await begin([reply('Hello from the scripted model.')]);
    await driver.ownerSays('hello');
    await driver.waitForReply('Hello from the scripted model.');
    expect(m.requests).toHaveLength(1);
    expect(userTexts(m)).toEqual(['hello']);
    const seen = await driver.botMessages();
    expect(seen.filter((t) => t.includes('Hello from the scripted model.'))).toHaveLength(1);
  });

  // The console has no second speaker, so the case is not defined for it (not skipped).
  const ifStranger = driver.hasStranger ? it : () => {};
  ifStranger("2: a stranger's message gets nothing and never reaches the model", async () => {
    const m = await begin([reply('Hi owner.')]);
    await driver.strangerSays('hello, I am stranger-canary-7731');
    expect(m.requests).toHaveLength(0);
    expect(await driver.botMessages()).toEqual([]);
    // The owner is still heard, and only the owner's words reached the model.
    await driver.ownerSays('hello');
    await driver.waitForReply('Hi owner.');
    expect(m.requests).toHaveLength(1);
    expect(JSON.stringify(m.requests)).not.toContain('stranger-canary-7731');
    expect(await driver.botMessages()).toEqual([expect.stringContaining('Hi owner.')]);
  });

  it(`3: a destructive shell call asks;${driver.hasStranger ? " a stranger's approval does nothing;" : ''} the owner's "once" runs it and the turn completes`, async () => {
    const m = await begin([shell('rm notes.txt'), reply('Removed notes.txt.')], { 'notes.txt': 'old\n' });
    await driver.ownerSays('please delete notes.txt');
    const prompt = await driver.waitForPrompt();
    expect(prompt.text).toContain('shell');
    expect(prompt.text).toContain('rm notes.txt');
    expect(existsSync(join(workspace, 'notes.txt'))).toBe(true);

    if (driver.hasStranger) {
      await driver.approve(prompt, 'once', 'stranger');
      expect(existsSync(join(workspace, 'notes.txt'))).toBe(true);
      expect(m.requests).toHaveLength(1);
      expect((await driver.botMessages()).some((t) => t.includes('Removed notes.txt.'))).toBe(false);
    }

    await driver.approve(prompt, 'once');
    await driver.waitForReply('Removed notes.txt.');
    expect(existsSync(join(workspace, 'notes.txt'))).toBe(false);
    expect(m.requests).toHaveLength(2);
    const toolResults = ((m.requests[1]?.messages ?? []) as Array<{ role: string; content: unknown }>)
      .filter((x) => x.role === 'tool')
      .map((x) => String(x.content));
    expect(toolResults.join('\n')).toMatch(/exit 0/);
  });

  it(`4: ${driver.helpCommands.join(' and ')} answer${driver.helpCommands.length > 1 ? '' : 's'} without calling the model`, async () => {
    const m = await begin([]);
    for (const [i, command] of driver.helpCommands.entries()) {
      await driver.ownerSays(command);
      const help = await driver.waitForReply('/help – this list', i + 1);
      expect(help).toBeTruthy();
    }
    // Each answer is the full command list.
    const lists = (await driver.botMessages()).filter((t) => t.includes('/new – start a fresh session'));
    expect(lists.length).toBeGreaterThanOrEqual(driver.helpCommands.length);
    expect(m.requests).toHaveLength(0);
  });
  it('5: /status answers in one message without calling the model', async () => {
    const m = await begin([]);
    await driver.ownerSays('/status');
    await driver.waitForReply('questions waiting:');
    // One message on a chat platform; the console prints it as lines.
    const status = (await driver.botMessages()).join('\n');
    expect(status).toMatch(/^steward \d+\.\d+\.\d+, up \d+ min/);
    expect(status).toMatch(/database: (pglite|postgres), answering/);
    expect(status).toMatch(/turns running: \d/);
    expect(status).toMatch(/memory: \d+ MiB resident/);
    expect(m.requests).toHaveLength(0);
  });
});
