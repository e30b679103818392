// The channel contract (test/channel-contract.test.ts) runs one set of cases against every channel.
// A driver plays the humans on one platform and reads what the bot posted there; each starts the
// real channel with the real assistant, permission chain, shell tool and store, and the scripted
// model as the only double.
import type { PermissionDecision } from '../../src/channel/port.ts';
import type { ScriptedModel } from './scripted-model.ts';

/** A permission prompt as the owner sees it. */
export interface PromptHandle {
  /** The platform's id for the prompt (message id, event id, or its place on the console). */
  id: string;
  text: string;
}

export interface ChannelDriver {
  readonly name: string;
  /** Whether anyone but the owner can reach the bot at all (the console has only its owner). */
  readonly hasStranger: boolean;
  /** Every spelling of the help command on this channel. */
  readonly helpCommands: readonly string[];
  /** Once per suite: accounts, logins. */
  prepare(): Promise<void>;
  /** Starts steward on this channel with a fresh store, working in `workspace`. */
  start(model: ScriptedModel, workspace: string): Promise<void>;
  ownerSays(text: string): Promise<void>;
  /** Resolves once the channel has had the message in hand (not that it answered). */
  strangerSays(text: string): Promise<void>;
  /** Waits for the `nth` (from 1) bot message in the owner's room containing `text`; returns it. */
  waitForReply(text: string, nth?: number): Promise<string>;
  /** Waits for the next permission prompt not returned before. */
  waitForPrompt(): Promise<PromptHandle>;
  /** Answers a prompt; as the stranger, resolves once the channel has had the answer in hand. */
  approve(prompt: PromptHandle, decision: PermissionDecision, as?: 'owner' | 'stranger'): Promise<void>;
  /** Everything the bot posted since `start`, wherever the owner or the stranger can see it. */
  botMessages(): Promise<string[]>;
  /** Stops the channel and removes its store; safe to call when not started. */
  stop(): Promise<void>;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
