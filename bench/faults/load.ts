// Load: the owner writes 20 messages at once while several digests fire in the same minute, and
// the Bot API answers every third send and edit with 429. Steward's Telegram channel has one room
// (the owner's private chat; other chats are strangers), so "20 chats active at once" is 20
// messages queued in that room at once, with the digests' turns (sessions of their own) posting
// into it beside them. Every message is answered once, every digest fire is posted once.
import type { PrivatePostgres } from '../../test/support/services.ts';
import { freshDatabase, query } from './db.ts';
import { dumpScenario } from './dump.ts';
import type { Fault } from './fault-proxy.ts';
import { answerText, DIGEST_PROMPT } from './model.ts';
import { type Row, replyRow } from './tally.ts';
import { awaitReplies, OWNER, sleep, telegramRig } from './telegram-rig.ts';

const DIGESTS = ['d1', 'd2', 'd3', 'd4', 'd5'];

/** Every third send or edit is answered 429 (retry_after 1); everything else passes. */
export function everyThird(): (method: string) => Fault {
  let n = 0;
  return (method) => (/^(sendMessage|editMessageText)$/.test(method) && ++n % 3 === 0 ? '429' : 'pass');
}

export async function loadWithDigests(pg: PrivatePostgres, messages: number): Promise<Row[]> {
  const dbUrl = await freshDatabase(pg.url);
  const digests = Object.fromEntries(
    DIGESTS.map((name) => [
      name,
      {
        cron: '* * * * *',
        timezone: 'UTC',
        channel: 'telegram',
        room: String(OWNER),
        prompt: `${DIGEST_PROMPT} ${name}`,
      },
    ]),
  );
  const rig = await telegramRig({
    dbUrl,
    model: { askEvery: 0, pauseMs: 40 },
    proxy: { pick: everyThird(), retryAfterS: 1 },
    config: { digests },
  });
  const expected: string[] = [];
  const sent = new Map<string, number>();
  const seen = new Map<string, number>();
  try {
    const proc = await rig.start();
    // Start just before a minute turns, so the digests fire while the messages are being answered.
    const toMinute = 60_000 - (Date.now() % 60_000);
    await sleep(Math.max(0, toMinute - 1500));
    const at = Date.now();
    await Promise.all(
      Array.from({ length: messages }, (_, i) => {
        const want = answerText(`T${i + 1}`);
        expected.push(want);
        sent.set(want, at);
        return rig.say(`T${i + 1}`);
      }),
    );
    await awaitReplies(rig, expected, 180_000, seen);
    // Let the fires of this minute finish and post (each reads the clock, then posts).
    const deadline = Date.now() + 90_000;
    const posted = async () =>
      (
        await query<{ n: number }>(
          dbUrl,
          "select count(*)::int as n from digest_runs where outcome <> 'running'",
        )
      )[0]?.n ?? 0;
    while (Date.now() < deadline && (await posted()) < DIGESTS.length) await sleep(500);
    await sleep(3000);
    const turns = replyRow({
      scenario: `load: ${messages} messages at once + ${DIGESTS.length} digests in one minute, 429 on every 3rd send/edit`,
      runs: 1,
      texts: rig.texts(),
      expected,
      sent,
      seen,
      markFile: rig.markFile,
      notes: `injected: ${JSON.stringify(rig.proxy?.injected ?? {})}`,
    });
    const runs = await query<{ digest: string; outcome: string; n: number }>(
      dbUrl,
      'select schedule_id as digest, outcome, count(*)::int as n from digest_runs group by 1, 2 order by 1, 2',
    );
    const posts = rig.texts().filter((t) => /^Digest d\d at /.test(t));
    const distinct = new Set(posts);
    const postedRuns = runs.filter((r) => r.outcome === 'posted').reduce((a, r) => a + r.n, 0);
    const fires = runs.reduce((a, r) => a + r.n, 0);
    const digestRow: Row = {
      scenario: `load: ${DIGESTS.length} digests firing in the same minute`,
      runs: fires,
      messages: fires,
      replies: distinct.size,
      duplicates: posts.length - distinct.size,
      losses: Math.max(0, postedRuns - distinct.size) + (fires - postedRuns),
      doubleRuns: 0,
      p50Ms: null,
      p95Ms: null,
      notes: `digest_runs: ${runs.map((r) => `${r.digest} ${r.outcome} ${r.n}`).join(', ')}`,
    };
    await dumpScenario('load', rig, dbUrl, proc.log());
    await proc.stop();
    return [turns, digestRow];
  } finally {
    await rig.close();
  }
}
