// The Telegram scenarios: kill -9 at random moments, PostgreSQL restarted, a misbehaving Bot API,
// a flapping model route, a burst, and memory over many turns.
import type { PrivatePostgres } from '../../test/support/services.ts';
import { freshDatabase, query } from './db.ts';
import { digestRow, everyMinute } from './digests.ts';
import { dumpScenario } from './dump.ts';
import { randomPlan, seeded } from './fault-proxy.ts';
import { answerText, DIGEST_PROMPT } from './model.ts';
import { type Row, replyRow } from './tally.ts';
import { awaitReplies, OWNER, sleep, type TelegramRig, telegramRig } from './telegram-rig.ts';

function row(
  scenario: string,
  runs: number,
  rig: TelegramRig,
  expected: string[],
  sent: Map<string, number>,
  seen: Map<string, number>,
  notes?: string,
): Row {
  if (process.env.FAULTS_DEBUG) console.error(JSON.stringify(rig.texts(), null, 1));
  const texts = rig.texts();
  return replyRow({
    scenario,
    runs,
    texts,
    expected,
    sent,
    seen,
    markFile: rig.markFile,
    ...(notes ? { notes } : {}),
  });
}

/** kill -9 at a random moment of each multi-step turn (and of the digests firing each minute). */
export async function telegramKills(pg: PrivatePostgres, kills: number): Promise<Row[]> {
  const dbUrl = await freshDatabase(pg.url);
  const rig = await telegramRig({
    dbUrl,
    model: { askEvery: 3, pauseMs: 80 },
    config: everyMinute('telegram', String(OWNER), DIGEST_PROMPT),
  });
  const random = seeded(1717);
  const expected: string[] = [];
  const sent = new Map<string, number>();
  const seen = new Map<string, number>();
  try {
    let proc = await rig.start();
    for (let k = 1; k <= kills; k++) {
      const want = answerText(`T${k}`);
      expected.push(want);
      sent.set(want, await rig.say(`T${k}`));
      const until = Date.now() + random() * 3000;
      while (Date.now() < until) {
        await rig.pressQuestions();
        await sleep(25);
      }
      await proc.kill9();
      proc = await rig.start();
      await awaitReplies(rig, expected, 90_000, seen);
    }
    await sleep(2000);
    const turns = row('telegram: kill -9 mid-turn', kills, rig, expected, sent, seen);
    const digests = await digestRow('telegram: digests under kill -9', rig.texts(), dbUrl);
    await proc.stop();
    return [turns, digests];
  } finally {
    await rig.close();
  }
}

/** `pg_ctl stop`/`start` mid-turn, with a message sent while the database is down. */
export async function postgresRestarts(pg: PrivatePostgres, restarts: number): Promise<Row> {
  const dbUrl = await freshDatabase(pg.url);
  const rig = await telegramRig({ dbUrl, model: { askEvery: 0, pauseMs: 80 } });
  const random = seeded(Number(process.env.FAULTS_SEED ?? 99));
  const expected: string[] = [];
  const sent = new Map<string, number>();
  const seen = new Map<string, number>();
  try {
    const proc = await rig.start();
    let k = 0;
    for (let r = 0; r < restarts; r++) {
      const a = answerText(`T${++k}`);
      expected.push(a);
      sent.set(a, await rig.say(`T${k}`));
      await sleep(random() * 1500);
      await pg.stop();
      const b = answerText(`T${++k}`);
      expected.push(b);
      sent.set(b, await rig.say(`T${k}`));
      await sleep(500 + random() * 1500);
      await pg.start();
      await awaitReplies(rig, expected, 90_000, seen);
    }
    await sleep(2000);
    const result = row('telegram: PostgreSQL restarted mid-turn', restarts, rig, expected, sent, seen);
    if (process.env.FAULTS_DEBUG)
      console.error(
        JSON.stringify(
          await query(
            dbUrl,
            'select turn_id, kind, left(payload::text, 80) as p from session_events order by id',
          ),
        ),
      );
    if (process.env.FAULTS_DEBUG)
      console.error(
        proc
          .log()
          .split('\n')
          .filter((l) => /"level":(40|50)|resuming|stranded/i.test(l))
          .map((l) => l.slice(0, 300))
          .join('\n'),
      );
    await proc.stop();
    return result;
  } finally {
    await rig.close();
  }
}

/** The Bot API answers 429, 5xx, resets and slow responses, sends and edits included. */
export async function misbehavingTelegram(pg: PrivatePostgres, messages: number): Promise<Row> {
  const dbUrl = await freshDatabase(pg.url);
  const random = seeded(4242);
  const pick = randomPlan(
    random,
    { '429': 0.12, '5xx': 0.08, reset: 0.06, slow: 0.08 },
    /^(sendMessage|editMessageText|sendChatAction|getUpdates)$/,
  );
  const rig = await telegramRig({
    dbUrl,
    model: { askEvery: 0, pauseMs: 120 },
    proxy: { pick, retryAfterS: 1, slowMs: 1500 },
  });
  const expected: string[] = [];
  const sent = new Map<string, number>();
  const seen = new Map<string, number>();
  try {
    const proc = await rig.start();
    for (let k = 1; k <= messages; k++) {
      const want = answerText(`T${k}`);
      expected.push(want);
      sent.set(want, await rig.say(`T${k}`));
      await awaitReplies(rig, [want], 60_000, seen);
    }
    // A reply whose send was reset waits for the channel's next message or the sweeper (30 s).
    await awaitReplies(rig, expected, 45_000, seen);
    await sleep(1500);
    const injected = Object.entries(rig.proxy?.injected ?? {})
      .map(
        ([m, f]) =>
          `${m} ${Object.entries(f)
            .filter(([x]) => x !== 'pass')
            .map(([x, n]) => `${x}×${n}`)
            .join(' ')}`,
      )
      .join('; ');
    const edits = rig.emulator.calls.length;
    const result = row(
      'telegram: 429 / 5xx / resets / slow',
      messages,
      rig,
      expected,
      sent,
      seen,
      `injected: ${injected}${edits ? '' : ''}`,
    );
    await dumpScenario('proxy', rig, dbUrl, proc.log());
    await proc.stop();
    return result;
  } finally {
    await rig.close();
  }
}

/** One burst of `n` messages in one chat: answered in order, one reply each. */
export async function burst(pg: PrivatePostgres, n: number): Promise<Row> {
  const dbUrl = await freshDatabase(pg.url);
  const rig = await telegramRig({ dbUrl, model: { askEvery: 0, pauseMs: 0, pieces: 1, plain: true } });
  const expected: string[] = [];
  const sent = new Map<string, number>();
  const seen = new Map<string, number>();
  try {
    const proc = await rig.start();
    for (let k = 1; k <= n; k++) {
      const want = answerText(`T${k}`);
      expected.push(want);
      sent.set(want, await rig.say(`T${k}`));
    }
    await awaitReplies(rig, expected, 120_000, seen);
    await sleep(1000);
    const order = rig
      .texts()
      .filter((t) => t.startsWith('Answer T'))
      .map((t) => Number(/T(\d+)/.exec(t)?.[1]));
    const inOrder = order.every((v, i) => i === 0 || v > (order[i - 1] as number));
    const result = row(
      `telegram: burst of ${n} in one chat`,
      1,
      rig,
      expected,
      sent,
      seen,
      `answered in order: ${inOrder}`,
    );
    if (!inOrder) result.losses += 0;
    await proc.stop();
    return { ...result, ...(inOrder ? {} : { scenario: `${result.scenario} (OUT OF ORDER)` }) };
  } finally {
    await rig.close();
  }
}

/**
 * RSS before, during and after `turns` plain turns, sent in bursts of 50. The answers are short
 * (about 15 tokens a turn), so the compaction budget is the smallest allowed: a compaction every
 * sixty-odd turns, about as often as the default budget meets replies of a realistic length.
 */
export async function memory(
  pg: PrivatePostgres,
  turns: number,
): Promise<Row & { rssBeforeMb: number; rssAfterMb: number; rssSeriesMb: number[] }> {
  const dbUrl = await freshDatabase(pg.url);
  const rig = await telegramRig({
    dbUrl,
    model: { askEvery: 0, pauseMs: 0, pieces: 1, plain: true },
    config: { compaction: { budget_tokens: 1000, keep_turns: 4 } },
  });
  const series: number[] = [];
  const expected: string[] = [];
  const sent = new Map<string, number>();
  const seen = new Map<string, number>();
  try {
    const proc = await rig.start();
    // Warm up (first turn loads what a turn needs), then measure.
    await rig.say('T0');
    await awaitReplies(rig, [answerText('T0')], 30_000);
    await sleep(1000);
    const before = proc.rssMb();
    for (let start = 1; start <= turns; start += 50) {
      const batch: string[] = [];
      for (let k = start; k < start + 50 && k <= turns; k++) {
        const want = answerText(`T${k}`);
        expected.push(want);
        batch.push(want);
        sent.set(want, await rig.say(`T${k}`));
      }
      await awaitReplies(rig, batch, 120_000, seen);
      if ((start + 49) % 250 === 0) series.push(proc.rssMb());
    }
    await sleep(2000);
    const after = proc.rssMb();
    const every = series.map((mb) => mb.toFixed(0)).join(', ');
    const result = row(
      `telegram: ${turns} turns, RSS ${before.toFixed(0)} → ${after.toFixed(0)} MiB`,
      1,
      rig,
      expected,
      sent,
      seen,
      `RSS before ${before.toFixed(1)} MiB, after ${after.toFixed(1)} MiB; every 250 turns: ${every} MiB; compaction.budget_tokens 1000`,
    );
    await proc.stop();
    return { ...result, rssBeforeMb: before, rssAfterMb: after, rssSeriesMb: series };
  } finally {
    await rig.close();
  }
}
