// The channel bench: a real `steward start` on the Telegram emulator behind the long-poll shim,
// with the scripted model, for PGlite and PostgreSQL; and the peak memory of `steward chat` and
// `steward policy check`. The current tree and a baseline git ref run interleaved in one run, so
// the figures come with ratios (current / baseline) in which the machine's noise cancels.
//
// Settings (environment): BENCH_BASELINE (git ref, default HEAD~1; `none` skips it),
// BENCH_BACKENDS (default pglite,postgres), BENCH_IDLE_S (idle measure after start, default 30),
// BENCH_ROUNDS (rounds of start-ups per tree, default 3), BENCH_EXISTING_STARTS (starts on the
// existing folder per round, default 3), BENCH_RTT (round trips, default 30),
// BENCH_TURNS (turns before the last memory reading, default 1000), BENCH_CHANNELS (default
// telegram,matrix; Matrix needs the STEWARD_TEST_MATRIX_* Synapse), BENCH_MATRIX_RTT (default 20).
import { type BackendName, freshState } from './channel/backends.ts';
import { cliPeaks } from './channel/cli-peaks.ts';
import { matrixRoundTrips } from './channel/matrix.ts';
import { type Rig, startRig } from './channel/rig.ts';
import { burst, idleFigures, manyTurns, roundTrips, startToPolling } from './channel/session.ts';
import { median, ratios, round } from './channel/stats.ts';
import { baselineTree, currentTree, type Tree } from './channel/tree.ts';

const setting = (name: string, fallback: string) => process.env[name] ?? fallback;
const number = (name: string, fallback: number) => Number(setting(name, String(fallback)));

async function coldStarts(rig: Rig, tree: Tree, backend: BackendName) {
  const state = await freshState(backend);
  try {
    const launch = { tree: tree.path, env: state.env, cwd: state.cwd };
    const fresh = await startToPolling(rig, launch);
    await fresh.proc.stop();
    // Starts on an existing folder vary by tens of milliseconds on a shared machine: take several.
    const existing: number[] = [];
    const starts = number('BENCH_EXISTING_STARTS', 3);
    for (let i = 0; i < starts; i++) {
      const start = await startToPolling(rig, launch);
      await start.proc.stop();
      existing.push(start.seconds);
    }
    return { fresh: fresh.seconds, existing };
  } finally {
    await state.remove();
  }
}

async function longSession(rig: Rig, tree: Tree, backend: BackendName) {
  const state = await freshState(backend);
  try {
    const launch = { tree: tree.path, env: state.env, cwd: state.cwd };
    // The schema exists before the measured start, as on any start but the first.
    await (await startToPolling(rig, launch)).proc.stop();
    const { proc } = await startToPolling(rig, launch);
    const stage = (what: string) => console.error(`channel bench: ${backend} ${tree.label}: ${what}`);
    try {
      stage('idle');
      const idle = await idleFigures(proc, number('BENCH_IDLE_S', 30));
      stage('round trips');
      const roundTrip = await roundTrips(rig, number('BENCH_RTT', 30));
      stage('bursts');
      const burst20 = await burst(rig, proc, 20);
      const burst50 = await burst(rig, proc, 50);
      const turns = number('BENCH_TURNS', 1000);
      stage(`${turns} turns`);
      const checkpoints = [Math.min(100, turns), turns];
      const rssAfterTurnsMib = await manyTurns(rig, proc, turns, checkpoints);
      return { idle, roundTrip, burst20, burst50, rssAfterTurnsMib };
    } catch (error) {
      throw new Error(
        `${backend} ${tree.label}: ${(error as Error).message}; steward said: ${proc.stderr().slice(-1500)}`,
      );
    } finally {
      await proc.stop();
    }
  } finally {
    await state.remove();
  }
}

async function benchBackend(trees: Tree[], backend: BackendName) {
  const rig = await startRig();
  try {
    const starts = new Map(trees.map((t) => [t.label, { fresh: [] as number[], existing: [] as number[] }]));
    for (let r = 0; r < number('BENCH_ROUNDS', 3); r++) {
      // Alternating order, so neither tree always runs on a warmer machine.
      for (const tree of r % 2 === 0 ? trees : [...trees].reverse()) {
        const s = await coldStarts(rig, tree, backend);
        starts.get(tree.label)?.fresh.push(s.fresh);
        starts.get(tree.label)?.existing.push(...s.existing);
      }
    }
    const figures: Record<string, unknown> = {};
    for (const tree of trees) {
      const s = starts.get(tree.label) ?? { fresh: [], existing: [] };
      figures[tree.label] = {
        startToPollingS: {
          freshMedian: round(median(s.fresh), 3),
          existingMedian: round(median(s.existing), 3),
          fresh: s.fresh.map((v) => round(v, 3)),
          existing: s.existing.map((v) => round(v, 3)),
        },
        ...(await longSession(rig, tree, backend)),
      };
    }
    return figures;
  } finally {
    await rig.close();
  }
}

export async function channelBench() {
  const ref = setting('BENCH_BASELINE', 'HEAD~1');
  const current = currentTree();
  const trees = ref === 'none' ? [current] : [baselineTree(ref), current];
  try {
    const channels = setting('BENCH_CHANNELS', 'telegram,matrix').split(',');
    const backends = channels.includes('telegram')
      ? (setting('BENCH_BACKENDS', 'pglite,postgres').split(',') as BackendName[])
      : [];
    const channel: Record<string, unknown> = {};
    for (const backend of backends) {
      const figures = await benchBackend(trees, backend);
      channel[backend] = { ...figures, ratio: ratios(figures.current, figures.baseline) };
    }
    const matrix: Record<string, unknown> = {};
    if (channels.includes('matrix')) {
      for (const tree of trees) {
        console.error(`channel bench: matrix ${tree.label}: round trips`);
        matrix[tree.label] = { roundTrip: await matrixRoundTrips(tree, number('BENCH_MATRIX_RTT', 20)) };
      }
      matrix.ratio = ratios(matrix.current, matrix.baseline);
    }
    const cli: Record<string, unknown> = {};
    for (const tree of trees) cli[tree.label] = await cliPeaks(tree.path);
    cli.ratio = ratios(cli.current, cli.baseline);
    return {
      name: 'channel',
      trees: Object.fromEntries(
        trees.map((t) => [t.label, t.label === 'baseline' ? `${ref} (${t.commit})` : t.commit]),
      ),
      settings: {
        idleS: number('BENCH_IDLE_S', 30),
        rounds: number('BENCH_ROUNDS', 3),
        existingStartsPerRound: number('BENCH_EXISTING_STARTS', 3),
        roundTrips: number('BENCH_RTT', 30),
        turns: number('BENCH_TURNS', 1000),
        matrixRoundTrips: number('BENCH_MATRIX_RTT', 20),
      },
      telegram: channel,
      matrix,
      cli,
      goals: {
        beyondPollAndModelMs: '< 50 median',
        matrixBeyondSyncAndModelMs: '< 50 median',
        idleRssMib: 'postgres <= 100, pglite <= 200, flat after 1,000 turns',
        startToPollingS: '< 0.5 on postgres and an existing PGlite folder',
        burst20: 'in order, one reply each, last within 3 s of the last model answer',
        chatPeakMib: '< 250',
        idleCpuPercent: '< 1',
      },
      note: "RSS is the steward process alone (a PostgreSQL server is not counted); CPU is % of one core. Matrix: the owner's own sync loop sees the message and the reply; beyondSyncAndModelMs is that total minus twice the message's send-to-sync time (the way in and the way out)",
    };
  } finally {
    for (const tree of trees) tree.remove();
  }
}
