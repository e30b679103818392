// One turn's outbound events as Matrix messages in its room: streamed text as throttled m.replace
// edits, tool activity as one edited notice, prompts (with their seeded reactions) and notices in
// the owner's direct room, large outputs as files. Homeserver calls run one at a time, in order.

import type { OutputReading } from '../../src/channel/port.ts';
import {
  exhaustive,
  type OutboundEvent,
  type PermissionPrompt,
  type ReplySink,
} from '../../src/channel/port.ts';
import type { Logger } from '../../src/log.ts';
import { DECISION_REACTIONS } from './commands.ts';
import type { PrivateRoom } from './direct-room.ts';
import type { MatrixOps } from './matrix-ops.ts';
import { askingContent, decidedContent, INLINE_ARGS_CHARS, outcomeLine, promptText } from './prompt-text.ts';
import { splitMessage, textContent } from './render.ts';
import type { MatrixStateStore } from './state-store.ts';

export interface RendererDeps {
  ops: MatrixOps;
  state: MatrixStateStore;
  log: Logger;
  /** Where prompts and notices go; a turn in it gets its prompts in place. */
  privateRoom: PrivateRoom;
  /** The least time between two edits of one message. */
  editIntervalMs: number;
  /** A stored output of `room`, read for the owner. */
  readOutput(room: string, ref: string): Promise<OutputReading>;
  /** Registers work others must wait for (a prompt being posted, before its reactions are looked up). */
  track(work: Promise<unknown>): void;
}

interface Stream {
  text: string;
  sent: Array<{ eventId: string; text: string }>;
  /** A flush is queued and will read the latest text when it runs. */
  queued: boolean;
  /** Its first flush was asked for: that one goes at once, later edits wait for the interval. */
  begun: boolean;
  /** The model step whose text it shows, when the core said. */
  step?: number;
  /** Its parts' send keys start with this: turn and step, fixed when the step became known. */
  keyPrefix?: string;
  /** An earlier process may have shown this step: each part sent is edited to this text. */
  replay?: boolean;
}

/** Outputs larger than this are not uploaded; the ref still pages them back. */
const MAX_FILE_BYTES = 32 * 1024 * 1024;

export function turnRenderer(deps: RendererDeps, room: string): ReplySink {
  const { ops, log } = deps;
  let chain: Promise<void> = Promise.resolve();
  /** Runs `work` after everything queued before it; resolves true once it succeeded. */
  const enqueue = (what: string, work: () => Promise<unknown>): Promise<boolean> => {
    const done = chain.then(work).then(
      () => true,
      (error: Error) => {
        log.warn({ room }, `matrix: could not ${what}: ${error.message}`);
        return false;
      },
    );
    chain = done.then(() => {});
    return done;
  };

  let stream: Stream = { text: '', sent: [], queued: false, begun: false };
  const turn = { id: undefined as string | undefined, recovered: false };
  const activity = { eventId: undefined as string | undefined, lines: new Map<string, string>(), shown: '' };
  let timer: NodeJS.Timeout | undefined;

  const flushStream = async (s: Stream) => {
    const parts = s.text.trim() === '' ? [] : splitMessage(s.text);
    for (const [i, part] of parts.entries()) {
      const sent = s.sent[i];
      if (!sent) {
        // Keyed by turn, step and part: the same part sent again by a later process (the turn
        // resumed after a crash) is the message the owner already has, not a second one.
        const key = s.keyPrefix === undefined ? undefined : `${s.keyPrefix}.${i}`;
        const eventId = await ops.send(room, textContent(part), key);
        // What an earlier process showed under that key may be older text: make it this text.
        if (key !== undefined && s.replay) await ops.edit(room, eventId, textContent(part));
        s.sent.push({ eventId, text: part });
      } else if (sent.text !== part) {
        await ops.edit(room, sent.eventId, textContent(part));
        sent.text = part;
      }
    }
    // The final text can be shorter than what streamed: remove parts it no longer has.
    for (const extra of s.sent.splice(parts.length)) await ops.redact(room, extra.eventId);
  };
  const flushActivity = async () => {
    const text = [...activity.lines.values()].join('\n');
    if (text === activity.shown || text === '') return;
    activity.shown = text;
    const content = { msgtype: 'm.notice', body: text };
    if (activity.eventId) await ops.edit(room, activity.eventId, content);
    else activity.eventId = await ops.send(room, content);
  };
  const flushNow = () => {
    clearTimeout(timer);
    timer = undefined;
    const s = stream;
    s.queued = true;
    return enqueue('send a reply', async () => {
      s.queued = false;
      await flushActivity();
      await flushStream(s);
    });
  };
  const schedule = () => {
    if (timer || stream.queued) return;
    // The first visible message goes as soon as there is something to show; only edits are paced.
    // It waits one turn of the event loop, so text that came in the same read (often the whole
    // reply, ending the turn) goes as one message instead of a message and an edit.
    const delay = stream.begun ? deps.editIntervalMs : 0;
    stream.begun = true;
    timer = setTimeout(() => void flushNow(), delay);
  };
  /** Text before a tool call or a prompt stays a message of its own; later text starts a new one. */
  const endStream = () => {
    const done = flushNow();
    stream = { text: '', sent: [], queued: false, begun: false };
    return done;
  };

  /** A later step's text is a message of its own (its send key names that step). */
  const enterStep = (step: number | undefined) => {
    if (step === undefined || stream.step === step) return;
    if (stream.step !== undefined) void endStream();
    stream.step = step;
    if (turn.id !== undefined) stream.keyPrefix = `${turn.id}.${step}`;
    // Only the first step a resumed turn shows can have been shown by the process before it:
    // later steps begin after results that process never logged.
    stream.replay = turn.recovered;
    turn.recovered = false;
  };

  const notice = (text: string, level: 'info' | 'error' = 'info') =>
    enqueue('send a notice', async () =>
      ops.send(await deps.privateRoom.ensure(), {
        msgtype: 'm.notice',
        body: level === 'error' ? `⚠️ ${text}` : text,
      }),
    );

  return async (event: OutboundEvent) => {
    switch (event.type) {
      case 'text_delta':
        enterStep(event.step);
        stream.text += event.text;
        schedule();
        return;
      case 'reply': {
        enterStep(event.step);
        stream.text = event.text.trim() === '' && stream.sent.length === 0 ? '(no answer)' : event.text;
        const shown = stream;
        const ok = await endStream();
        // The core records this in its delivery ledger: every part in the room, and their event ids.
        return { delivered: ok && shown.sent.length > 0, messageIds: shown.sent.map((p) => p.eventId) };
      }
      case 'notice':
        await endStream();
        await notice(event.text, event.level);
        return;
      case 'tool_started':
        void endStream();
        activity.lines.set(event.callId, `⚙️ ${event.tool} ${shorten(event.args, 120)}`);
        schedule();
        return;
      case 'tool_finished': {
        const line = activity.lines.get(event.callId) ?? `⚙️ ${event.tool}`;
        activity.lines.set(event.callId, `${line} ${event.ok ? '✓' : '✗'} ${event.durationMs} ms`);
        schedule();
        return;
      }
      case 'permission_prompt': {
        void endStream();
        const posted = enqueue('post a permission prompt', () => postPrompt(deps, room, event.prompt));
        deps.track(posted);
        await posted;
        return;
      }
      case 'permission_settled':
        await enqueue('mark a prompt decided', async () => {
          const prompt = await deps.state.promptByRequest(event.requestId);
          if (!prompt || !(await deps.state.closePrompt(prompt.eventId, event.decision))) return;
          await ops.edit(
            prompt.promptRoom,
            prompt.eventId,
            decidedContent(prompt, outcomeLine(event.decision, event.decidedBy)),
          );
        });
        return;
      case 'output_offloaded':
        void enqueue('send an output file', () => sendOutputFile(deps, room, event.ref));
        return;
      case 'turn_started':
        // One sink can carry a resumed turn and then the next one: nothing of the first is keyed
        // under the second's id.
        await endStream();
        turn.id = event.turnId;
        turn.recovered = event.recovered === true;
        return;
      case 'turn_ended':
        return;
      default:
        exhaustive(event);
    }
  };
}

/** The prompt goes to the private room; a turn elsewhere gets a pointer to it. */
async function postPrompt(deps: RendererDeps, room: string, prompt: PermissionPrompt): Promise<void> {
  const { ops } = deps;
  const directRoom = await deps.privateRoom.ensure();
  let argsFile: string | undefined;
  if (prompt.args.length > INLINE_ARGS_CHARS) {
    argsFile = `${prompt.tool}-arguments-${prompt.requestId.slice(0, 8)}.json`;
    await ops.sendFile(directRoom, {
      name: argsFile,
      data: Buffer.from(prompt.args),
      caption: `Arguments of ${prompt.tool} (${prompt.args.length} characters), exactly as they would run`,
      mimetype: 'application/json',
    });
  }
  const text = promptText(prompt, argsFile);
  const eventId = await ops.send(directRoom, askingContent(text));
  await deps.state.addPrompt({
    eventId,
    requestId: prompt.requestId,
    promptRoom: directRoom,
    turnRoom: room,
    ...text,
  });
  for (const [key] of DECISION_REACTIONS) await ops.react(directRoom, eventId, key);
  if (room !== directRoom) {
    await ops.send(room, {
      msgtype: 'm.notice',
      body: `Waiting for the owner to approve ${prompt.tool} in the direct room.`,
    });
  }
}

/** A stored output as a file, with its ref in the text. Also what `!output <ref>` sends. */
export async function sendOutputFile(
  deps: Pick<RendererDeps, 'ops' | 'readOutput'>,
  room: string,
  ref: string,
): Promise<void> {
  const output = await deps.readOutput(room, ref);
  if (!output.ok) {
    await deps.ops.send(room, { msgtype: 'm.notice', body: output.text });
    return;
  }
  const summary = `${output.tool} output, ${output.lines} lines, ${formatBytes(output.bytes)}; ref ${ref}`;
  if (output.bytes > MAX_FILE_BYTES) {
    await deps.ops.send(room, {
      msgtype: 'm.notice',
      body: `${summary}. Too large to send as a file; ask me to page through it.`,
    });
    return;
  }
  const pieces: Buffer[] = [];
  for await (const page of output.pages) pieces.push(Buffer.from(page));
  const data = Buffer.concat(pieces);
  await deps.ops.sendFile(room, {
    name: `${output.tool}-output-${ref}.txt`,
    data,
    caption: `${summary}. !output ${ref} sends it again.`,
  });
}

function shorten(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
