import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import {
  type Channel,
  type ChannelPort,
  exhaustive,
  type OutboundEvent,
  PERMISSION_DECISIONS,
  type PermissionDecision,
  type PermissionPrompt,
  type ReplySink,
} from '../../src/channel/port.ts';

/** Whoever holds the terminal holds the data folder: the console speaks as the owner. */
export const CONSOLE_OWNER = 'owner';
export const CONSOLE_CHANNEL = 'console';

export interface ConsoleIo {
  input: Readable & { isTTY?: boolean };
  output: Writable;
  errors: Writable;
}

export function renderPrompt(prompt: PermissionPrompt): string {
  return [
    `[permission] ${prompt.tool} wants to run`,
    `  arguments: ${prompt.args}`,
    `  danger: ${prompt.score} (${prompt.level}), layer: ${prompt.layer}`,
    `  why: ${prompt.rationale}`,
    ...(prompt.layer === 'egress' ? ['  session: allows this host for the rest of the session'] : []),
    'answer once, session or deny: ',
  ].join('\n');
}

/**
 * Each input line is one message from the owner, or the answer to a waiting permission prompt.
 * Replies and prompts go to `output`, tool activity and notices to `errors`. Works the same on a
 * pipe as on a terminal, and returns at end of input once every line has been handled.
 */
export function consoleChannel(io: ConsoleIo, room = 'local'): Channel {
  const waiting: PermissionPrompt[] = [];
  let midLine = false;
  const endLine = () => {
    if (midLine) io.output.write('\n');
    midLine = false;
  };
  const sink: ReplySink = (event: OutboundEvent) => {
    switch (event.type) {
      case 'text_delta':
        io.output.write(event.text);
        midLine = true;
        break;
      case 'reply':
        // A streamed reply is already on screen; only the line end is missing.
        io.output.write(midLine ? '\n' : `${event.text}\n`);
        midLine = false;
        break;
      case 'notice':
        endLine();
        io.errors.write(`steward: ${event.text}\n`);
        break;
      case 'tool_started':
        endLine();
        io.errors.write(`· ${event.tool} ${event.args}\n`);
        break;
      case 'tool_finished':
        io.errors.write(`${event.ok ? '✓' : '✗'} ${event.tool} (${event.durationMs} ms)\n`);
        break;
      case 'permission_prompt':
        endLine();
        waiting.push(event.prompt);
        io.output.write(`${renderPrompt(event.prompt)}\n`);
        break;
      case 'permission_settled': {
        const index = waiting.findIndex((p) => p.requestId === event.requestId);
        if (index !== -1) waiting.splice(index, 1);
        io.errors.write(`steward: ${event.decision} by ${event.decidedBy}\n`);
        break;
      }
      case 'output_offloaded':
        io.errors.write(
          `· ${event.tool} output stored: ${event.bytes} bytes, ${event.lines} lines, ref ${event.ref}\n`,
        );
        break;
      case 'turn_started':
      case 'turn_ended':
        break;
      default:
        exhaustive(event);
    }
  };

  return {
    name: CONSOLE_CHANNEL,
    outbox: (r: string) => (r === room ? sink : undefined),
    ownerRoom: () => room,
    health: () => 'this terminal',
    async run(assistant: ChannelPort, signal: AbortSignal) {
      await assistant.online(CONSOLE_CHANNEL);
      for (const prompt of await assistant.pendingPrompts(CONSOLE_CHANNEL, room))
        sink({ type: 'permission_prompt', prompt });
      // The reader starts only now and reads at once: a reader left waiting while the work above
      // ran would drop lines that arrived in between.
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
        const text = line.trim();
        const prompt = waiting[0];
        if (prompt && text !== '') {
          const decision = text.toLowerCase() as PermissionDecision;
          if (!PERMISSION_DECISIONS.includes(decision)) {
            io.output.write('answer once, session or deny: \n');
          } else {
            waiting.shift();
            const result = await assistant.decide(
              { requestId: prompt.requestId, decision, channel: CONSOLE_CHANNEL, senderId: CONSOLE_OWNER },
              sink,
            );
            if (!result.ok) sink({ type: 'notice', level: 'info', text: result.text });
            // A pipe's next line may answer the resumed turn's next question: read it after.
            else await result.resumed;
          }
        } else if (text !== '') {
          await assistant.handle(
            { channel: CONSOLE_CHANNEL, room, senderId: CONSOLE_OWNER, text: line },
            sink,
          );
        }
        if (interactive) io.errors.write('> ');
      }
      endLine();
    },
  };
}
