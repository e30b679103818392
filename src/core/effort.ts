import type { Effort } from '../gateway/types.ts';

/** What happened just before the next model request of a turn. */
export type StepOutcome = 'user_message' | 'clean' | 'failure' | 'denial';

/**
 * Effort dialing: a routine, successful tool step does not need the model to think hard about
 * the next one. A new question, a failure or a denial keeps normal effort.
 */
export function effortAfter(outcome: StepOutcome): Effort {
  return outcome === 'clean' ? 'low' : 'normal';
}
