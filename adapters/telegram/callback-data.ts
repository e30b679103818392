// What a button carries back. Telegram allows 64 bytes of callback data; ours is an opaque id the
// core issued (a request id or an output ref) and one letter, never arguments.
import type { PermissionDecision } from '../../src/channel/port.ts';

export const CALLBACK_DATA_LIMIT = 64;

export type ButtonAction =
  | { kind: 'decide'; requestId: string; decision: PermissionDecision }
  | { kind: 'output'; ref: string };

const LETTERS: Record<PermissionDecision, string> = { once: 'o', session: 's', deny: 'd' };
const DECISIONS: Record<string, PermissionDecision> = { o: 'once', s: 'session', d: 'deny' };
const ID = /^[A-Za-z0-9_-]{1,56}$/;

/** The callback data for a button; throws when the id could not travel intact. */
export function encodeButton(action: ButtonAction): string {
  const id = action.kind === 'decide' ? action.requestId : action.ref;
  if (!ID.test(id)) throw new Error(`an id of ${id.length} characters cannot travel in a button`);
  const data = action.kind === 'decide' ? `p:${LETTERS[action.decision]}:${id}` : `o:${id}`;
  if (Buffer.byteLength(data) > CALLBACK_DATA_LIMIT) throw new Error('callback data over 64 bytes');
  return data;
}

/** The action a press asks for, or undefined for data this build never issued. */
export function decodeButton(data: string | undefined): ButtonAction | undefined {
  if (!data) return undefined;
  const decide = /^p:([osd]):(.+)$/.exec(data);
  if (decide) {
    const decision = DECISIONS[decide[1] as string];
    const requestId = decide[2] as string;
    return decision && ID.test(requestId) ? { kind: 'decide', requestId, decision } : undefined;
  }
  const output = /^o:(.+)$/.exec(data);
  if (output && ID.test(output[1] as string)) return { kind: 'output', ref: output[1] as string };
  return undefined;
}
