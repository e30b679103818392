// The Matrix scenarios, each on a private Synapse: kill -9 at random moments of multi-step turns,
// the homeserver restarted mid-turn and mid-sync, and tight rate limits.
import type { PrivatePostgres } from '../../test/support/services.ts';
import { freshDatabase, query } from './db.ts';
import { digestRow, everyMinute } from './digests.ts';
import { dumpMatrix } from './dump.ts';
import { seeded } from './fault-proxy.ts';
import { awaitMatrixReplies, type MatrixRig, matrixRig } from './matrix-rig.ts';
import { answerText, DIGEST_PROMPT } from './model.ts';
import { type Row, replyRow } from './tally.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Tally {
  expected: string[];
  sent: Map<string, number>;
  seen: Map<string, number>;
}
const tally = (): Tally => ({ expected: [], sent: new Map(), seen: new Map() });

async function row(scenario: string, runs: number, rig: MatrixRig, t: Tally, notes?: string): Promise<Row> {
  await rig.refresh();
  if (process.env.FAULTS_DEBUG) console.error(JSON.stringify(rig.texts(), null, 1));
  return replyRow({
    scenario,
    runs,
    texts: rig.texts(),
    ...t,
    markFile: rig.markFile,
    ...(notes ? { notes } : {}),
  });
}

async function send(rig: MatrixRig, t: Tally, k: number) {
  const want = answerText(`T${k}`);
  t.expected.push(want);
  t.sent.set(want, await rig.say(`T${k}`));
}

/** Answers questions while `ms` pass, so a kill can land after an answer as well as before. */
async function busyWait(rig: MatrixRig, ms: number) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    await rig.refresh();
    await rig.answerQuestions();
    await sleep(100);
  }
}

/** kill -9 at a random moment of each multi-step turn (streaming, tool, question, reply), restart. */
export async function matrixKills(pg: PrivatePostgres, kills: number): Promise<Row[]> {
  const dbUrl = await freshDatabase(pg.url);
  const rig = await matrixRig({
    dbUrl,
    model: { askEvery: 3, pauseMs: 80 },
    config: (room) => everyMinute('matrix', room, DIGEST_PROMPT),
  });
  const random = seeded(1718);
  const t = tally();
  try {
    let proc = await rig.start();
    let stoppedAt: number | undefined;
    for (let k = 1; k <= kills && stoppedAt === undefined; k++) {
      await send(rig, t, k);
      await busyWait(rig, random() * 5000);
      await proc.kill9();
      proc = await rig.start();
      // A message unanswered after 90 s is a loss; every later wait would time out on it too.
      if (!(await awaitMatrixReplies(rig, t.expected, 90_000, t.seen))) stoppedAt = k;
    }
    if (stoppedAt !== undefined) await dumpMatrix('matrix-kill', dbUrl, proc.log());
    await sleep(3000);
    const prompts = rig.texts().filter((x) => x.startsWith('🔐 Permission needed')).length;
    const result = await row(
      'matrix: kill -9 mid-turn',
      stoppedAt ?? kills,
      rig,
      t,
      `${prompts} prompts for the asking turns (answered by reaction and by typed reply in turn); a turn is counted only once answered${stoppedAt === undefined ? '' : `; stopped after kill ${stoppedAt}, a message unanswered for 90 s`}`,
    );
    await rig.refresh();
    const digests = await digestRow('matrix: digests under kill -9', rig.texts(), dbUrl);
    await dumpMatrix('matrix-kill', dbUrl, proc.log());
    await proc.stop();
    return [result, digests];
  } finally {
    await rig.close();
  }
}

/** Synapse stopped (SIGTERM, or SIGKILL every other time) mid-turn and while steward idles in its sync. */
export async function synapseRestarts(pg: PrivatePostgres, restarts: number): Promise<Row> {
  const rig = await matrixRig({ dbUrl: await freshDatabase(pg.url), model: { askEvery: 0, pauseMs: 120 } });
  const random = seeded(1719);
  const t = tally();
  let k = 0;
  try {
    const proc = await rig.start();
    for (let r = 0; r < restarts; r++) {
      const midTurn = r % 2 === 0;
      await send(rig, t, ++k);
      // Mid-turn: the reply is streaming (sends and edits); otherwise: answered, the long poll open.
      if (midTurn) await sleep(random() * 4000);
      else await awaitMatrixReplies(rig, t.expected, 60_000, t.seen);
      await (r % 4 < 2 ? rig.synapse.stop() : rig.synapse.kill());
      await sleep(500 + random() * 2500);
      await rig.synapse.start();
      await send(rig, t, ++k);
      await awaitMatrixReplies(rig, t.expected, 90_000, t.seen);
    }
    await sleep(3000);
    const result = await row(
      'matrix: Synapse restarted mid-send and mid-sync',
      restarts,
      rig,
      t,
      'a private Synapse (SQLite) stopped with SIGTERM or SIGKILL, down 0.5-3 s',
    );
    await proc.stop();
    return result;
  } finally {
    await rig.close();
  }
}

/** Synapse's own rc_message tight for the bot; a burst of messages still gets one reply each. */
export async function matrixRateLimits(pg: PrivatePostgres, messages: number): Promise<Row> {
  const rc = { per_second: 0.5, burst_count: 4 };
  const rig = await matrixRig({
    dbUrl: await freshDatabase(pg.url),
    model: { askEvery: 0, pauseMs: 60 },
    synapse: { rcMessage: rc },
  });
  const t = tally();
  try {
    const proc = await rig.start();
    const from = Date.now();
    for (let k = 1; k <= messages; k++) await send(rig, t, k);
    await awaitMatrixReplies(rig, t.expected, 600_000, t.seen);
    const seconds = (Date.now() - from) / 1000;
    await sleep(3000);
    const waits = (proc.log().match(/rate limited; waiting as asked/g) ?? []).length;
    await rig.refresh();
    const times = rig.botEventTimes();
    const span = ((times.at(-1) ?? 0) - (times[0] ?? 0)) / 1000;
    const pace = `${times.length} bot events in ${span.toFixed(0)} s (${(times.length / Math.max(span, 1)).toFixed(2)}/s)`;
    const result = await row(
      `matrix: rc_message ${rc.per_second}/s burst ${rc.burst_count}`,
      1,
      rig,
      t,
      `all answered in ${seconds.toFixed(0)} s; ${pace}; steward waited out ${waits} M_LIMIT_EXCEEDED answers (its log)`,
    );
    await proc.stop();
    return result;
  } finally {
    await rig.close();
  }
}

/**
 * Rooms at once: the owner writes one message in each of `rooms` group rooms at the same moment,
 * while five digests fire in the same minute, each into one of those rooms. Every message is
 * answered once in its own room, every fire posted once.
 */
export async function matrixRoomsAtOnce(pg: PrivatePostgres, count: number): Promise<Row[]> {
  const dbUrl = await freshDatabase(pg.url);
  const rig = await matrixRig({
    dbUrl,
    model: { askEvery: 0, pauseMs: 40 },
    extraRooms: count,
    config: (_dm, rooms) => ({
      digests: Object.fromEntries(
        rooms.slice(0, 5).map((room, i) => [
          `d${i + 1}`,
          {
            cron: '* * * * *',
            timezone: 'UTC',
            channel: 'matrix',
            room,
            prompt: `${DIGEST_PROMPT} d${i + 1}`,
          },
        ]),
      ),
    }),
  });
  const t = tally();
  try {
    const proc = await rig.start();
    for (const room of rig.rooms) while (!(await rig.joined(room))) await sleep(200);
    // Just before a minute turns, so the digests fire while the messages are being answered.
    await sleep(Math.max(0, 60_000 - (Date.now() % 60_000) - 1500));
    await Promise.all(
      rig.rooms.map(async (room, i) => {
        const want = answerText(`T${i + 1}`);
        t.expected.push(want);
        t.sent.set(want, await rig.say(`T${i + 1}`, room));
      }),
    );
    const read = async () => (await Promise.all(rig.rooms.map((room) => rig.textsIn(room)))).flat();
    for (const deadline = Date.now() + 180_000; Date.now() < deadline; await sleep(300)) {
      const texts = await read();
      for (const want of t.expected)
        if (!t.seen.has(want) && texts.includes(want)) t.seen.set(want, Date.now());
      const fired = await query<{ n: number }>(
        dbUrl,
        "select count(*)::int as n from digest_runs where outcome <> 'running'",
      );
      if (t.seen.size === t.expected.length && (fired[0]?.n ?? 0) >= 5) break;
    }
    await sleep(3000);
    const perRoom = await Promise.all(rig.rooms.map((room) => rig.textsIn(room)));
    // An answer counts only in the room its message was written in.
    const texts = perRoom.flatMap((inRoom, i) =>
      inRoom.filter((x) => !x.startsWith('Answer ') || x === answerText(`T${i + 1}`)),
    );
    const astray = perRoom.flat().length - texts.length;
    const turns = replyRow({
      scenario: `matrix: ${count} rooms at once + 5 digests in one minute`,
      runs: 1,
      texts,
      ...t,
      markFile: rig.markFile,
      notes: `answers in another room than their message: ${astray}`,
    });
    const digests = await digestRow(
      'matrix: 5 digests firing in the same minute, one room each',
      texts,
      dbUrl,
      {
        unpostedIsLoss: true,
      },
    );
    await dumpMatrix('matrix-rooms', dbUrl, proc.log(), async () =>
      Promise.all(rig.rooms.map((room) => rig.eventsIn(room))),
    );
    await proc.stop();
    return [{ ...turns, losses: turns.losses + astray }, digests];
  } finally {
    await rig.close();
  }
}
