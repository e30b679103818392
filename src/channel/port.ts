// The port every channel implements. Words from any one platform stay in its adapter; this file
// speaks only of rooms, senders, messages and decisions.

import type { Decision, Layer, OwnerDecision } from '../permissions/vocabulary.ts';

/** A message as a channel received it. `senderId` is the platform's stable id for the author. */
export interface InboundMessage {
  channel: string;
  room: string;
  senderId: string;
  text: string;
  /**
   * The platform's id for this message, unique within the room. A message delivered again after a
   * restart (the platform never heard it was handled) is recognised by it and not answered twice.
   */
  id?: string;
  /** Files the owner sent with the message; fetched only once the sender is known to be the owner. */
  attachments?: InboundAttachment[];
  /**
   * Someone else's words the owner passed on (a forward, a quoted reply to another person's
   * message): they reach the model fenced, with `origin` as the source.
   */
  quote?: InboundQuote;
  /** What the owner sent that no channel turns into text (a video, a sticker), in a few words. */
  unsupported?: string;
}

export type AttachmentKind = 'document' | 'photo' | 'voice' | 'audio';

/**
 * A file as the platform announced it. `download` fetches it from the platform itself (never from
 * a URL anyone else chose) and stops with `AttachmentTooLarge` once more than `maxBytes` arrive.
 */
export interface InboundAttachment {
  kind: AttachmentKind;
  /** The file name, when the platform has one (documents, audio). */
  name?: string;
  mime?: string;
  /** The size the platform announced; checked before any download, never trusted alone. */
  size?: number;
  /** Voice and audio: the length in seconds, when announced. */
  durationS?: number;
  /**
   * Set when the file is someone else's the owner passed on (a forward), as its origin: a
   * forwarded voice note's words are then the stranger's, fenced, not the owner's message.
   */
  from?: string;
  download(maxBytes: number, signal?: AbortSignal): Promise<Uint8Array>;
}

export interface InboundQuote {
  /** Who wrote it, as the owner would name them (a person, a channel, "a hidden sender"). */
  origin: string;
  text: string;
}

/** A download passed its cap; `limit` is the cap in bytes and `bytes` what was announced or seen. */
export class AttachmentTooLarge extends Error {
  override name = 'AttachmentTooLarge';
  readonly limit: number;
  readonly bytes: number | undefined;
  /** Set when the platform, not steward's configuration, imposes the limit. */
  readonly platformLimit: string | undefined;
  constructor(limit: number, bytes?: number, platformLimit?: string) {
    super(`the file is larger than ${limit} bytes`);
    this.limit = limit;
    this.bytes = bytes;
    this.platformLimit = platformLimit;
  }
}

/**
 * What a turn sends back, in order. `reply` comes exactly once per answered turn and carries the
 * final answer; `text_delta` streams it (and any text of earlier steps) as it is written.
 */
export type OutboundEvent =
  /**
   * The core starts (or resumes) working on a turn; everything until `turn_ended` belongs to it.
   * `recovered`: a restart or a failure cut the turn off, so an earlier process may already have
   * shown part of what follows (see `step`).
   */
  | { type: 'turn_started'; turnId: string; recovered?: boolean }
  /** The core stopped working on the turn: answered, parked on a question, failed, or interrupted. */
  | { type: 'turn_ended'; turnId: string; status: TurnEndStatus }
  /**
   * `step` numbers the model calls of a turn from 1: the same step streamed again after a restart,
   * and the answer of that step sent from the log, carry the same number, so a channel whose
   * platform takes an idempotency key can make a second send of it the same message.
   */
  | { type: 'text_delta'; text: string; step?: number }
  | { type: 'reply'; text: string; step?: number }
  | { type: 'notice'; level: 'info' | 'error'; text: string }
  | { type: 'tool_started'; callId: string; tool: string; args: string }
  | { type: 'tool_finished'; callId: string; tool: string; ok: boolean; durationMs: number }
  | { type: 'permission_prompt'; prompt: PermissionPrompt }
  | { type: 'permission_settled'; requestId: string; decision: Decision; decidedBy: string }
  /** A large result was stored; `ref` pages it back (retrieve_output) and channels can offer it whole. */
  | { type: 'output_offloaded'; ref: string; tool: string; bytes: number; lines: number };

/** For the default of a switch over a closed union: a new member fails to compile, not to render. */
export function exhaustive(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}

/**
 * What a sink may return for a `reply`: whether every part reached the room, and the platform's
 * ids of the messages that hold it. Digest runs record it; a sink that returns nothing is taken
 * as delivered with no ids known.
 */
export interface Delivery {
  delivered: boolean;
  messageIds: string[];
}

// biome-ignore lint/suspicious/noConfusingVoidType: most sinks are async functions that return nothing.
export type ReplySink = (event: OutboundEvent) => void | Promise<void | Delivery | undefined>;

export type TurnEndStatus = 'answered' | 'parked' | 'failed' | 'ended' | 'interrupted';

/** What the owner can answer to a prompt. */
export type PermissionDecision = OwnerDecision;

export { OWNER_DECISIONS as PERMISSION_DECISIONS } from '../permissions/vocabulary.ts';

/** A question for the owner, rendered by each channel as buttons, reactions or a typed answer. */
export interface PermissionPrompt {
  requestId: string;
  tool: string;
  /** The exact, full arguments; what runs after approval is exactly this. */
  args: string;
  score: number;
  level: string;
  layer: Layer;
  rationale: string;
}

export interface HandleHooks {
  /**
   * Called once the message is safely in the log (or needs no logging: ignored, a repeat, a
   * command), before the turn runs; a platform is told the message was received only then.
   */
  accepted?(): void;
}

export type DecideResult =
  /** Recorded; `resumed` settles when the turn that waited on it has gone as far as it can. */
  | { ok: true; resumed: Promise<void> }
  | { ok: false; reason: 'not_owner' | 'unknown' | 'settled' | 'expired'; text: string };

export type OutputReading =
  | { ok: true; tool: string; bytes: number; lines: number; pages: AsyncIterable<string> }
  | { ok: false; reason: 'not_owner' | 'unknown'; text: string };

/** What a channel may ask of the core, and nothing more: the lifecycle stays in the core. */
export interface ChannelPort {
  /** One inbound message; resolves when its turn is answered, parked or failed. */
  handle(message: InboundMessage, sink: ReplySink, hooks?: HandleHooks): Promise<void>;
  /** The owner's answer to a prompt; returns once recorded, the resumed turn runs on `sink`. */
  decide(
    input: { requestId: string; decision: PermissionDecision; channel: string; senderId: string },
    sink: ReplySink,
  ): Promise<DecideResult>;
  /** Questions still waiting in a room, so a channel can show them again after a restart. */
  pendingPrompts(channel: string, room: string): Promise<PermissionPrompt[]>;
  /**
   * The channel can post now (its outbox works): the core resumes the turns a restart cut off in
   * its rooms and resolves once they are queued, so the channel takes new input only after that.
   */
  online(channel: string): Promise<void>;
  /** The whole of a large result stored in this room, page by page; owner only. */
  readOutput(input: { channel: string; room: string; senderId: string; ref: string }): Promise<OutputReading>;
}

export interface Channel {
  readonly name: string;
  /** Runs until the signal aborts or the channel's input ends. */
  run(core: ChannelPort, signal: AbortSignal): Promise<void>;
  /**
   * Posts into one of this channel's rooms without an inbound message: resumed turns, timed-out
   * questions, scheduled digests. Undefined for a room this channel cannot reach.
   */
  outbox(room: string): ReplySink | undefined;
  /** The owner's private room on this channel, where failures and notices go; undefined until known. */
  ownerRoom?(): string | undefined;
  /** One short phrase for /status: how the channel is doing (connected, retrying, …). */
  health?(): string;
}
