// A flapping model route: the first entry of the default route fails at random before its first
// token (503, or the connection reset with no answer) and mid-stream (the connection cut after a
// piece of text); the second entry always works. Before the first token the router retries and
// falls back, so the owner sees nothing of it; a cut mid-stream ends the turn with one notice
// (never a second model finishing the first one's answer). Each message's outcome is counted from
// the chat: its answer, or the one notice that appeared while it was the message in flight.

import { type ScriptStep, startScriptedModel } from '../../test/support/scripted-model.ts';
import type { PrivatePostgres } from '../../test/support/services.ts';
import { freshDatabase } from './db.ts';
import { dumpScenario } from './dump.ts';
import { seeded } from './fault-proxy.ts';
import { answerText, faultModel } from './model.ts';
import { markRuns, percentile, type Row } from './tally.ts';
import { sleep, telegramRig } from './telegram-rig.ts';

const NOTICE = /^⚠️ model: /;
const MODEL = { askEvery: 0, pauseMs: 60 };

/** The flaky endpoint's answer to one request: a fault, or the scripted step. Pure but for `random`. */
export function flakyStep(step: ScriptStep, roll: number): { step: ScriptStep; fault: string } {
  if (roll < 0.15) return { step: { status: 503, body: { error: { message: 'overloaded' } } }, fault: '503' };
  if (roll < 0.3) return { step: { drop: true }, fault: 'reset before the first token' };
  // Cut after the first piece of text, if the step streams any (a tool call alone is left whole).
  if (roll < 0.45 && 'raw' in step && /"content":"[^"]/.test(String(step.raw[1] ?? '')))
    return { step: { raw: step.raw.slice(0, 2), destroy: true }, fault: 'cut mid-stream' };
  return { step, fault: 'pass' };
}

export async function modelFlapping(pg: PrivatePostgres, messages: number): Promise<Row> {
  const dbUrl = await freshDatabase(pg.url);
  const random = seeded(Number(process.env.FAULTS_SEED ?? 777));
  const script = faultModel(MODEL);
  const faults: Record<string, number> = {};
  const flaky = await startScriptedModel((body) => {
    const { step, fault } = flakyStep(script(body), random());
    faults[fault] = (faults[fault] ?? 0) + 1;
    return step;
  });
  const rig = await telegramRig({
    dbUrl,
    model: MODEL,
    routeFromConfig: true,
    config: {
      providers: { flaky: { kind: 'openai', base_url: flaky.baseUrl } },
      routes: {
        default: [
          { provider: 'flaky', model: 'test-model' },
          { provider: 'default', model: 'test-model' },
        ],
      },
    },
  });
  const notices = () => rig.texts().filter((t) => NOTICE.test(t)).length;
  const noticesOf: number[] = [];
  const ms: number[] = [];
  try {
    const proc = await rig.start();
    for (let k = 1; k <= messages; k++) {
      const before = notices();
      const want = answerText(`T${k}`);
      const sent = await rig.say(`T${k}`);
      const deadline = sent + 60_000;
      while (Date.now() < deadline && notices() === before && !rig.texts().some((t) => t.includes(want)))
        await sleep(50);
      ms.push(Date.now() - sent);
      // Whatever else this message brings (a second answer, a second notice) shows by now.
      await sleep(1200);
      noticesOf.push(notices() - before);
    }
    await sleep(3000);
    const texts = rig.texts();
    let replies = 0;
    let duplicates = 0;
    const lost: string[] = [];
    for (let k = 1; k <= messages; k++) {
      const outcomes = texts.filter((t) => t.includes(answerText(`T${k}`))).length + (noticesOf[k - 1] ?? 0);
      replies += Math.min(1, outcomes);
      duplicates += Math.max(0, outcomes - 1);
      if (outcomes === 0) lost.push(`T${k}`);
    }
    // A notice after the last window would be one no message accounts for.
    const stray = notices() - noticesOf.reduce((a, b) => a + b, 0);
    await dumpScenario('flapping', rig, dbUrl, proc.log());
    await proc.stop();
    const cut = noticesOf.reduce((a, b) => a + b, 0);
    return {
      scenario: 'model route flapping (503 / reset / cut mid-stream)',
      runs: messages,
      messages,
      replies,
      duplicates: duplicates + stray,
      losses: lost.length,
      doubleRuns: markRuns(rig.markFile).doubles,
      p50Ms: percentile(ms, 50),
      p95Ms: percentile(ms, 95),
      notes: [
        `first entry: ${Object.entries(faults)
          .map(([f, n]) => `${f}×${n}`)
          .join(', ')}; ${messages - cut} answered, ${cut} ended with one notice (cut mid-stream)`,
        lost.length ? `lost: ${lost.join(' / ')}` : '',
      ]
        .filter(Boolean)
        .join('; '),
    };
  } finally {
    await rig.close();
    await flaky.close();
  }
}
