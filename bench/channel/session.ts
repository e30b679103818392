// One steward process's figures on the Telegram rig: start-up, idle memory and CPU, round trips,
// bursts, and memory after many turns.
import { cpuSeconds, rssMib, rssSampler, type StewardProcess, spawnSteward } from './proc.ts';
import { type Rig, until } from './rig.ts';
import { median, quantile, round } from './stats.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export interface Launch {
  tree: string;
  env: Record<string, string>;
  cwd: string;
}

/** Starts steward and resolves at its first getUpdates, with the seconds that took. */
export async function startToPolling(
  rig: Rig,
  launch: Launch,
): Promise<{ proc: StewardProcess; seconds: number }> {
  const before = rig.shim.polls.length;
  const proc = spawnSteward(launch.tree, ['start'], { ...launch.env, ...rig.env }, launch.cwd);
  let exited = false;
  proc.child.once('exit', () => {
    exited = true;
  });
  await until(
    () => {
      if (exited) throw new Error(`steward start exited early: ${proc.stderr().slice(-800)}`);
      return rig.shim.polls[before];
    },
    'the first getUpdates',
    60_000,
    2,
  );
  const at = rig.shim.polls[before] ?? Number.NaN;
  return { proc, seconds: (at - proc.startedAt) / 1000 };
}

/** Idle RSS `idleS` after start, and CPU over the idle window from 10 s (or a third of it) on. */
export async function idleFigures(proc: StewardProcess, idleS: number) {
  const windowStart = proc.startedAt + Math.min(10, idleS / 3) * 1000;
  await sleep(windowStart - performance.now());
  const cpu0 = cpuSeconds(proc.pid);
  const t0 = performance.now();
  await sleep(proc.startedAt + idleS * 1000 - performance.now());
  const cpu1 = cpuSeconds(proc.pid);
  const seconds = (performance.now() - t0) / 1000;
  return { rssMib: round(rssMib(proc.pid)), cpuPercent: round(((cpu1 - cpu0) / seconds) * 100, 2) };
}

/** `count` single messages, one at a time; where each round trip's time goes. */
export async function roundTrips(rig: Rig, count: number) {
  const beyond: number[] = [];
  const total: number[] = [];
  const poll: number[] = [];
  const toModel: number[] = [];
  const afterModel: number[] = [];
  for (let i = 0; i < count; i++) {
    const { marker, sentAt } = await rig.say();
    const repliedAt = await until(() => rig.replyAt(marker), `the reply to ${marker}`, 30_000);
    const delivered = rig.deliveredAt(marker) ?? Number.NaN;
    const answered = rig.answeredAt(marker) ?? Number.NaN;
    total.push(repliedAt - sentAt);
    poll.push(delivered - sentAt);
    beyond.push(repliedAt - delivered);
    toModel.push(answered - delivered);
    afterModel.push(repliedAt - answered);
    // The turn's last edits and the update's confirmation settle before the next message.
    await sleep(150);
  }
  const summary = (values: number[]) => ({
    median: round(median(values)),
    p95: round(quantile(values, 0.95)),
  });
  return {
    count,
    beyondPollAndModelMs: summary(beyond),
    totalMs: summary(total),
    pollMs: summary(poll),
    deliveredToModelMs: summary(toModel),
    modelToReplyMs: summary(afterModel),
  };
}

/** `size` messages sent at once: in order, one reply each, and how long after the last model answer. */
export async function burst(rig: Rig, proc: StewardProcess, size: number) {
  const sampler = rssSampler(proc.pid);
  const rssBefore = rssMib(proc.pid);
  const markers: string[] = [];
  const started = performance.now();
  for (let i = 0; i < size; i++) markers.push((await rig.say()).marker);
  const last = markers[markers.length - 1] ?? '';
  const replies = await until(
    () => {
      const at = markers.map((m) => rig.replyAt(m));
      return at.every((t) => t !== undefined) ? (at as number[]) : undefined;
    },
    `${size} burst replies`,
    size * 2_000 + 30_000,
  );
  await sleep(300);
  const peak = sampler.stop();
  const lastAnswer = rig.answeredAt(last) ?? Number.NaN;
  const order = rig.replyOrder().filter((m) => markers.includes(m));
  return {
    size,
    lastModelAnswerToLastReplyMs: round(Math.max(...replies) - lastAnswer),
    firstSendToLastReplyMs: round(Math.max(...replies) - started),
    inOrder: order.join(' ') === markers.join(' '),
    oneReplyEach: markers.every((m) => rig.replyMessages(m) === 1),
    rssBeforeMib: round(rssBefore),
    rssPeakMib: round(peak),
  };
}

/** RSS after `turns` more turns (sent in bursts of 20), measured after a short settle. */
export async function manyTurns(rig: Rig, proc: StewardProcess, turns: number, checkpoints: number[]) {
  const rss: Record<string, number> = {};
  for (let done = 0; done < turns; ) {
    const size = Math.min(20, turns - done);
    const markers: string[] = [];
    for (let i = 0; i < size; i++) markers.push((await rig.say()).marker);
    await until(
      () => (markers.every((m) => rig.replyAt(m) !== undefined) ? true : undefined),
      'turns',
      120_000,
      20,
    );
    done += size;
    if (checkpoints.includes(done)) {
      await sleep(3000);
      rss[String(done)] = round(rssMib(proc.pid));
    }
  }
  return rss;
}
