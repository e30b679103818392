import type { Writable } from 'node:stream';
import type { Env } from '../src/config/load.ts';

/** Marks a start-up stage; does nothing unless STEWARD_DEBUG_TIMING is set. */
export type StageMark = (stage: string) => void;

/**
 * STEWARD_DEBUG_TIMING=1 writes `steward timing: <epoch ms> <stage>` to stderr at each start-up
 * stage. Epoch milliseconds, because `bin/steward.js` replaces the process once (execve) and the new
 * image's clock starts again: whoever spawned steward subtracts its own spawn time.
 */
export function stageMarks(env: Env, stderr: Writable): StageMark {
  if (!env.STEWARD_DEBUG_TIMING) return () => {};
  return (stage) => {
    stderr.write(`steward timing: ${(performance.timeOrigin + performance.now()).toFixed(1)} ${stage}\n`);
  };
}
