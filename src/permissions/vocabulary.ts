// The closed words of the permission chain, shared by the store, the session log, the port and
// every renderer. A switch over any of them is exhaustive, so a new word cannot be rendered by a
// catch-all by accident.

/** The layer of the chain that decided a call. */
/** `egress`: the session read outside content and the call reaches a host nobody trusted named. */
export type Layer = 'constraint' | 'policy' | 'egress' | 'exempt' | 'classifier' | 'grant' | 'ask';

export const LAYERS: readonly Layer[] = [
  'constraint',
  'policy',
  'egress',
  'exempt',
  'classifier',
  'grant',
  'ask',
];

/** What the owner can answer to a prompt. */
export type OwnerDecision = 'once' | 'session' | 'deny';

export const OWNER_DECISIONS: readonly OwnerDecision[] = ['once', 'session', 'deny'];

/**
 * How a request was settled: by the owner, by its deadline, automatically because nobody was
 * there to ask (digests), or because the owner sent a new message instead of deciding.
 */
export type Decision = OwnerDecision | 'timeout' | 'auto_deny' | 'superseded';

export function approves(decision: Decision): boolean {
  switch (decision) {
    case 'once':
    case 'session':
      return true;
    case 'deny':
    case 'timeout':
    case 'auto_deny':
    case 'superseded':
      return false;
  }
}

/** Old rows spelled the asking layer 'default'; everything unknown reads as the strictest word. */
export function asLayer(value: string): Layer {
  if (value === 'default') return 'ask';
  return (LAYERS as readonly string[]).includes(value) ? (value as Layer) : 'ask';
}
