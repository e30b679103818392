// FAULTS_MERGE: a run of some fault scenarios replaces only their rows in the committed results.
import { describe, expect, it } from 'vitest';
import { mergeResults, type Results } from '../bench/faults/merge.ts';
import type { Row } from '../bench/faults/tally.ts';

const row = (scenario: string, step?: string, replies = 1): Row => ({
  scenario,
  runs: 1,
  messages: 1,
  replies,
  duplicates: 0,
  losses: 0,
  doubleRuns: 0,
  p50Ms: null,
  p95Ms: null,
  ...(step ? { step } : {}),
});
const results = (rows: Row[], seconds = 10): Results => ({ date: 'd', seconds, rows });

describe('mergeResults', () => {
  it('keeps rows of scenarios not run, replaces those of steps run now, adds new ones', () => {
    const earlier = results([
      row('telegram: kill -9 mid-turn'),
      row('telegram: 50 turns, RSS 1 → 2 MiB', 'memory'),
      row('matrix: kill -9 mid-turn', 'matrix-kill', 0),
    ]);
    const now = results(
      [row('matrix: kill -9 mid-turn', 'matrix-kill'), row('telegram: 50 turns, RSS 1 → 3 MiB', 'memory')],
      5,
    );
    const merged = mergeResults(earlier, now);
    expect(merged.rows.map((r) => [r.scenario, r.replies])).toEqual([
      ['telegram: kill -9 mid-turn', 1],
      ['matrix: kill -9 mid-turn', 1],
      ['telegram: 50 turns, RSS 1 → 3 MiB', 1],
    ]);
    expect(merged.seconds).toBe(15);
  });
  it('a row from before steps were recorded is replaced by one of the same name', () => {
    const merged = mergeResults(
      results([row('telegram: burst of 50 in one chat')]),
      results([row('telegram: burst of 50 in one chat', 'burst', 7)]),
    );
    expect(merged.rows).toHaveLength(1);
    expect(merged.rows[0]?.replies).toBe(7);
  });
  it('without earlier results, the run is the results', () => {
    const now = results([row('x', 'a')]);
    expect(mergeResults(undefined, now)).toBe(now);
  });
});
