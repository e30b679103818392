// The digest row of a kill scenario: every fire's post shown once, none posted twice, and every
// fire the database calls posted is in the room.
import { query } from './db.ts';
import type { Row } from './tally.ts';

/** A digest that fires every minute, posting into `room` of `channel`. */
export const everyMinute = (channel: string, room: string, prompt: string) => ({
  digests: { faults: { cron: '* * * * *', timezone: 'UTC', channel, room, prompt } },
});

/** `texts`: the rooms' messages as they read now (edits applied); digest posts start "Digest [name] at ". */
export async function digestRow(
  scenario: string,
  texts: string[],
  dbUrl: string,
  /** Without kills, a fire that did not post is lost; with them, it is reported, as designed. */
  how: { unpostedIsLoss?: boolean } = {},
): Promise<Row> {
  const posts = texts.filter((t) => /^Digest (\w+ )?at /.test(t));
  const distinct = new Set(posts);
  const runs = await query<{ outcome: string; n: number; why: string[] }>(
    dbUrl,
    `select outcome, count(*)::int as n, array_remove(array_agg(distinct detail), null) as why
     from digest_runs group by outcome`,
  );
  const fires = runs.reduce((a, r) => a + r.n, 0);
  const posted = runs.find((r) => r.outcome === 'posted')?.n ?? 0;
  const silent = Math.max(0, posted - distinct.size) + (how.unpostedIsLoss ? fires - posted : 0);
  return {
    scenario,
    runs: fires,
    messages: fires,
    replies: distinct.size,
    duplicates: posts.length - distinct.size,
    losses: silent,
    doubleRuns: 0,
    p50Ms: null,
    p95Ms: null,
    notes: `digest_runs outcomes: ${runs.map((r) => `${r.outcome} ${r.n}${r.why.length ? ` (${r.why.join('; ')})` : ''}`).join(', ')}${how.unpostedIsLoss ? '' : '; a fire cut off before its post is reported to the owner by the watchdog, not posted again'}`,
  };
}
