// The port every channel implements. Words from any one platform stay in its adapter; this file
// speaks only of rooms, senders, messages and decisions.

import type { Assistant } from '../core/assistant.ts';

/** A message as a channel received it. `senderId` is the platform's stable id for the author. */
export interface InboundMessage {
  channel: string;
  room: string;
  senderId: string;
  text: string;
}

/** What a turn sends back, in order. `reply` comes exactly once per answered turn. */
export type OutboundEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'reply'; text: string }
  | { type: 'notice'; level: 'info' | 'error'; text: string };

export type ReplySink = (event: OutboundEvent) => void | Promise<void>;

export type PermissionDecision = 'once' | 'session' | 'deny';

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
}
