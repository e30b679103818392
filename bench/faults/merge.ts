// FAULTS_MERGE=1: a run of some scenarios (FAULTS_ONLY) replaces only their rows in the committed
// results; the rows of scenarios not run this time are kept as they were.
import { existsSync, readFileSync } from 'node:fs';
import type { Row } from './tally.ts';

export interface Results {
  date: string;
  seconds: number;
  [key: string]: unknown;
  rows: Row[];
}

/** Pure: `earlier` with every row of a step that ran now (or of the same scenario) replaced. */
export function mergeResults(earlier: Results | undefined, now: Results): Results {
  if (!earlier) return now;
  const steps = new Set(now.rows.map((r) => r.step).filter(Boolean));
  const names = new Set(now.rows.map((r) => r.scenario));
  const kept = earlier.rows.filter((r) => !(r.step && steps.has(r.step)) && !names.has(r.scenario));
  return { ...earlier, ...now, seconds: earlier.seconds + now.seconds, rows: [...kept, ...now.rows] };
}

export function readResults(file: string): Results | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Results) : undefined;
}
