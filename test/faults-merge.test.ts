// FAULTS_MERGE: a run of some fault scenarios replaces only their rows in the committed results.
import { describe, expect, it } from 'vitest';
import { mergeResults, type Results } from '../bench/faults/merge.ts';
import { type Row, replyRow } from '../bench/faults/tally.ts';

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

describe('replyRow', () => {
  it('counts from the platform texts: one duplicate, one loss, latencies of the replies seen', () => {
    const got = replyRow({
      scenario: 's',
      runs: 2,
      texts: ['answer A', 'answer A again', 'unrelated'],
      expected: ['answer A', 'answer B'],
      sent: new Map([
        ['answer A', 1000],
        ['answer B', 1000],
      ]),
      seen: new Map([['answer A', 1250]]),
      markFile: '/nonexistent/mark-file',
      notes: 'injected: x',
    });
    expect(got).toEqual({
      scenario: 's',
      runs: 2,
      messages: 2,
      replies: 1,
      duplicates: 1,
      losses: 1,
      doubleRuns: 0,
      p50Ms: 250,
      p95Ms: 250,
      notes: 'injected: x; lost: answer B',
    });
  });
});
