import type { ToolCall } from '../gateway/types.ts';
import { DEFAULT_LIMITS } from '../limits.ts';

export interface Ceilings {
  /** The step at which tools are dropped and the model must answer. */
  maxSteps: number;
  /** The same call (tool and arguments) this many times in a row forces the final step early. */
  maxRepeats: number;
}

export const DEFAULT_CEILINGS: Ceilings = {
  maxSteps: DEFAULT_LIMITS.maxSteps,
  maxRepeats: DEFAULT_LIMITS.maxRepeats,
};

/**
 * What a step may do. `tools`: the normal case. `warn`: the model is told to finish (step 15 of 16).
 * `final`: no tool schemas at all are sent; the model must answer from what it has.
 */
export type StepDirective = 'tools' | 'warn' | 'final';

export function stepDirective(step: number, repeats: number, ceilings: Ceilings): StepDirective {
  if (step >= ceilings.maxSteps || repeats >= ceilings.maxRepeats) return 'final';
  if (step === ceilings.maxSteps - 1) return 'warn';
  return 'tools';
}

/** How many times in a row, counting back from the latest step, the same single call was made. */
export function trailingRepeats(steps: ReadonlyArray<readonly ToolCall[]>): number {
  const key = (calls: readonly ToolCall[]) =>
    calls.map((c) => `${c.name}\u0000${canonicalJson(c.arguments)}`).join('\u0001');
  const last = steps.at(-1);
  if (!last || last.length === 0) return 0;
  const target = key(last);
  let count = 0;
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i];
    if (!step || key(step) !== target) break;
    count++;
  }
  return count;
}

/**
 * Arguments that differ only in key order or spacing are the same call; empty arguments are `{}`,
 * as the registry reads them.
 */
function canonicalJson(text: string): string {
  if (text.trim() === '') return '{}';
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)));
  } catch {
    return text.trim();
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  }
  return value;
}

export const FINISH_NOW =
  'You are at the last step before tools are switched off. Do not call any more tools: answer the owner now with what you have, and say what is still unknown.';

export const REPEAT_STOP =
  'You have made the same tool call several times in a row. Tools are now off: answer the owner with what you have, and say what went wrong.';
