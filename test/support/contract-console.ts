// The console as a contract driver: steward as `steward chat` builds it, fed through a pipe.

import { PassThrough } from 'node:stream';
import { CONSOLE_CHANNEL, CONSOLE_OWNER, consoleChannel } from '../../adapters/console/console-channel.ts';
import { buildAssistant } from '../../cli/build-assistant.ts';
import { openStore } from '../../cli/runtime.ts';
import { loadConfig } from '../../src/config/load.ts';
import { createLogger } from '../../src/log.ts';
import type { ChannelDriver, PromptHandle } from './contract-drivers.ts';
import { runChannel } from './run-channel.ts';
import { tempDir } from './services.ts';
import { waitFor } from './telegram-emulator.ts';

const PROMPT_START = '[permission] ';
const PROMPT_END = 'answer once, session or deny: ';

export function consoleDriver(): ChannelDriver {
  let running: { stop(): Promise<void> } | undefined;
  let input: PassThrough | undefined;
  let output = '';
  let promptsTaken = 0;

  const occurrences = (text: string) => output.split(text).length - 1;
  const prompts = (): PromptHandle[] =>
    output
      .split(PROMPT_START)
      .slice(1)
      .map((block, i) => ({ id: String(i), text: PROMPT_START + block.split(PROMPT_END)[0] }));

  return {
    name: 'console',
    hasStranger: false,
    helpCommands: ['/help'],
    async prepare() {},

    async start(model, workspace) {
      const dir = tempDir('steward-contract-console-');
      const rt = {
        config: loadConfig(
          {
            STEWARD_DATA_DIR: dir.path,
            STEWARD_WORKSPACE: workspace,
            STEWARD_MODEL_BASE_URL: model.baseUrl,
            STEWARD_MODEL: 'test-model',
          },
          dir.path,
        ),
        log: createLogger('silent', []),
      };
      const db = await openStore(rt);
      const built = await buildAssistant(rt, db, { [CONSOLE_CHANNEL]: CONSOLE_OWNER });
      // As a terminal: the console then says when it reads input. Lines that arrive before its read
      // loop starts (while it recovers turns) are lost, so the driver waits for that greeting.
      const stdin = Object.assign(new PassThrough(), { isTTY: true });
      const stdout = new PassThrough().setEncoding('utf8');
      const stderr = new PassThrough().setEncoding('utf8');
      let errors = '';
      stderr.on('data', (chunk: string) => {
        errors += chunk;
      });
      output = '';
      promptsTaken = 0;
      stdout.on('data', (chunk: string) => {
        output += chunk;
      });
      const abort = new AbortController();
      const done = runChannel(
        consoleChannel({ input: stdin, output: stdout, errors: stderr }),
        built.assistant,
        abort.signal,
      );
      input = stdin;
      running = {
        async stop() {
          stdin.end();
          abort.abort();
          await done;
          built.stop();
          await db.close();
          dir.remove();
        },
      };
      await Promise.race([
        waitFor(() => errors.includes('type a message'), 'the console to read input'),
        done.then(() => Promise.reject(new Error('the console ended before reading input'))),
      ]);
    },

    async ownerSays(text) {
      input?.write(`${text}\n`);
    },
    async strangerSays() {
      throw new Error('the console has no stranger: whoever holds the terminal is the owner');
    },
    async waitForReply(text, nth = 1) {
      await waitFor(() => occurrences(text) >= nth, `console output "${text}" (${nth})`);
      return output.split('\n').find((line) => line.includes(text)) ?? text;
    },
    async waitForPrompt() {
      const n = promptsTaken++;
      return waitFor(() => output.includes(PROMPT_END) && prompts()[n], 'a permission prompt on the console');
    },
    async approve(_prompt, decision, as = 'owner') {
      if (as === 'stranger') throw new Error('the console has no stranger');
      // The console answers the oldest waiting prompt with a typed word.
      input?.write(`${decision}\n`);
    },
    async botMessages() {
      return output.split('\n').filter((line) => line.trim() !== '');
    },
    async stop() {
      await running?.stop();
      running = undefined;
      input = undefined;
    },
  };
}
