import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONSOLE_CHANNEL, CONSOLE_OWNER, consoleChannel } from '../adapters/console/console-channel.ts';
import { createAssistant } from '../src/core/assistant.ts';
import { openAiCompatible } from '../src/gateway/openai-compatible.ts';
import { createLogger } from '../src/log.ts';
import type { Db } from '../src/store/db.ts';
import { sessionGrants } from '../src/store/grants.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/open-db.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import type { Tool } from '../src/tools/types.ts';
import { conservativeGate } from './support/gates.ts';
import { runChannel } from './support/run-channel.ts';
import { reply, type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { tempDir } from './support/services.ts';

const ran: string[] = [];
const note: Tool = {
  name: 'note',
  description: 'Writes a note.',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['text'],
    properties: { text: { type: 'string' } },
  },
  trusted: true,
  async execute(args) {
    ran.push(String(args.text));
    return 'noted';
  },
};

const collect = () => {
  const stream = new PassThrough();
  let text = '';
  stream.setEncoding('utf8').on('data', (c: string) => {
    text += c;
  });
  return { stream, text: () => text };
};

describe('console channel', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: Db;
  let model: ScriptedModel;
  beforeEach(async () => {
    ran.length = 0;
    dir = tempDir();
    db = await openPglite(`${dir.path}/pg`);
    await migrate(db);
  });
  afterEach(async () => {
    await model.close();
    await db.close();
    dir.remove();
  });

  const run = async (input: string) => {
    const assistant = createAssistant({
      db,
      gate: conservativeGate(sessionGrants(db, () => new Date())),
      log: createLogger('silent', []),
      owners: { [CONSOLE_CHANNEL]: CONSOLE_OWNER },
      workspace: dir.path,
      route: {
        name: 'default',
        entries: [
          { providerName: 'default', provider: openAiCompatible({ baseUrl: model.baseUrl }), model: 'm' },
        ],
      },
      tools: createToolRegistry([note]),
    });
    const out = collect();
    const err = collect();
    const stdin = new PassThrough();
    stdin.end(input);
    await runChannel(
      consoleChannel({ input: stdin, output: out.stream, errors: err.stream }),
      assistant,
      new AbortController().signal,
    );
    return { out: out.text(), err: err.text() };
  };

  it('prints a prompt with the full arguments, re-asks on a bad answer, and runs on "once"', async () => {
    model = await startScriptedModel([
      { chunks: [], toolCalls: [{ name: 'note', argumentChunks: ['{"text":"buy milk"}'] }] },
      reply('Noted.'),
    ]);
    const { out, err } = await run('remember milk\nmaybe\nonce\n');
    expect(out).toBe(
      [
        '[permission] note wants to run',
        '  arguments: {"text":"buy milk"}',
        '  danger: 2 (moderate), layer: ask',
        '  why: note is not exempt, so the owner decides',
        'answer once, session or deny: ',
        'answer once, session or deny: ',
        'Noted.',
        '',
      ].join('\n'),
    );
    expect(ran).toEqual(['buy milk']);
    expect(err).toContain('· note {"text":"buy milk"}');
    expect(err).toMatch(/✓ note \(\d+ ms\)/);
  });

  it('shows a waiting question again after a restart, and the answer completes the turn', async () => {
    model = await startScriptedModel([
      { chunks: [], toolCalls: [{ name: 'note', argumentChunks: ['{"text":"x"}'] }] },
      reply('Done after restart.'),
    ]);
    const first = await run('note x\n');
    expect(first.out).toContain('[permission] note wants to run');
    expect(ran).toEqual([]);
    const second = await run('deny\n');
    expect(second.out).toMatch(/^\[permission\] note wants to run[\s\S]*Done after restart\.\n$/);
    expect(ran).toEqual([]);
    expect(second.err).toContain('deny by owner');
  });
});
