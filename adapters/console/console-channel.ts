import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Channel, OutboundEvent } from '../../src/channel/port.ts';
import type { Assistant } from '../../src/core/assistant.ts';

/** Whoever holds the terminal holds the data folder: the console speaks as the owner. */
export const CONSOLE_OWNER = 'owner';
export const CONSOLE_CHANNEL = 'console';

export interface ConsoleIo {
  input: Readable & { isTTY?: boolean };
  output: Writable;
  errors: Writable;
}

/**
 * Each input line is one message from the owner. Replies stream to `output` as they arrive and end
 * with a newline; notices go to `errors`. Works the same on a pipe as on a terminal, and returns
 * at end of input once every line has been answered.
 */
export function consoleChannel(io: ConsoleIo, room = 'local'): Channel {
  return {
    name: CONSOLE_CHANNEL,
    async run(assistant: Assistant, signal: AbortSignal) {
      const lines = createInterface({
        input: io.input,
        terminal: false,
        crlfDelay: Number.POSITIVE_INFINITY,
      });
      signal.addEventListener('abort', () => lines.close(), { once: true });
      const interactive = io.input.isTTY === true;
      if (interactive) io.errors.write('steward: type a message and press Enter; Ctrl-D ends.\n> ');
      for await (const line of lines) {
        if (signal.aborted) break;
        if (line.trim() !== '') {
          let midLine = false;
          await assistant.handle(
            { channel: CONSOLE_CHANNEL, room, senderId: CONSOLE_OWNER, text: line },
            (event: OutboundEvent) => {
              if (event.type === 'text_delta') {
                io.output.write(event.text);
                midLine = true;
              } else if (event.type === 'reply') {
                // A streamed reply is already on screen; only the line end is missing.
                io.output.write(midLine ? '\n' : `${event.text}\n`);
                midLine = false;
              } else {
                if (midLine) io.output.write('\n');
                midLine = false;
                io.errors.write(`steward: ${event.text}\n`);
              }
            },
          );
        }
        if (interactive) io.errors.write('> ');
      }
    },
  };
}
