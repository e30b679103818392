// The port every channel implements. Words from any one platform stay in its adapter; this file
// speaks only of rooms, senders, messages and decisions.

import type { Assistant } from '../core/assistant.ts';

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
}

/**
 * What a turn sends back, in order. `reply` comes exactly once per answered turn and carries the
 * final answer; `text_delta` streams it (and any text of earlier steps) as it is written.
 */
export type OutboundEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'reply'; text: string }
  | { type: 'notice'; level: 'info' | 'error'; text: string }
  | { type: 'tool_started'; callId: string; tool: string; args: string }
  | { type: 'tool_finished'; callId: string; tool: string; ok: boolean; durationMs: number }
  | { type: 'permission_prompt'; prompt: PermissionPrompt }
  | { type: 'permission_settled'; requestId: string; decision: string; decidedBy: string }
  /** A large result was stored; `ref` pages it back (retrieve_output) and channels can offer it whole. */
  | { type: 'output_offloaded'; ref: string; tool: string; bytes: number; lines: number };

export type ReplySink = (event: OutboundEvent) => void | Promise<void>;

export type PermissionDecision = 'once' | 'session' | 'deny';

export const PERMISSION_DECISIONS: readonly PermissionDecision[] = ['once', 'session', 'deny'];

/** A question for the owner, rendered by each channel as buttons, reactions or a typed answer. */
export interface PermissionPrompt {
  requestId: string;
  tool: string;
  /** The exact, full arguments; what runs after approval is exactly this. */
  args: string;
  score: number;
  level: string;
  layer: string;
  rationale: string;
}

export interface Channel {
  readonly name: string;
  /** Runs until the signal aborts or the channel's input ends. */
  run(assistant: Assistant, signal: AbortSignal): Promise<void>;
  /**
   * Posts into one of this channel's rooms without an inbound message: resumed turns, timed-out
   * questions, scheduled digests. Undefined for a room this channel cannot reach.
   */
  outbox(room: string): ReplySink | undefined;
  /** The owner's private room on this channel, where failures and notices go; undefined until known. */
  ownerRoom?(): string | undefined;
}
