// `npm run faults`: the fault and load suite, with real parts (real `steward start` processes,
// a private PostgreSQL cluster, the Telegram emulator, Synapse, the scripted model). Prints one
// table and writes bench/results/faults.json and faults.md. Run counts come from the environment:
// FAULTS_KILLS (30), FAULTS_PG_RESTARTS (6), FAULTS_PROXY_MESSAGES (30), FAULTS_BURST (50),
// FAULTS_RSS_TURNS (1000), FAULTS_FLAP_MESSAGES (30), FAULTS_LOAD_MESSAGES (20),
// FAULTS_MATRIX_KILLS (30), FAULTS_SYNAPSE_RESTARTS (8), FAULTS_MATRIX_RATE_MESSAGES (12),
// FAULTS_MATRIX_ROOMS (20);
// FAULTS_ONLY=name,name runs a subset (FAULTS_MERGE=1 keeps the other rows of the committed
// results); FAULTS_OUT names another results folder.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { privatePostgres } from '../../test/support/services.ts';
import { loadWithDigests } from './load.ts';
import { matrixKills, matrixRateLimits, matrixRoomsAtOnce, synapseRestarts } from './matrix-scenarios.ts';
import { mergeResults, readResults } from './merge.ts';
import { modelFlapping } from './model-flapping.ts';
import { type Row, table } from './tally.ts';
import { burst, memory, misbehavingTelegram, postgresRestarts, telegramKills } from './telegram-scenarios.ts';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const only = process.env.FAULTS_ONLY?.split(',').filter(Boolean);
const wanted = (name: string) => !only || only.includes(name);

const pg = await privatePostgres();
if (!pg)
  throw new Error('the fault suite needs STEWARD_TEST_PG_BIN (eval "$(bash scripts/test-services.sh)")');
const rows: Row[] = [];
const started = Date.now();
const extra: Record<string, unknown> = {};
const step = async (name: string, work: () => Promise<Row | Row[]>) => {
  if (!wanted(name)) return;
  const t = Date.now();
  process.stderr.write(`faults: ${name}…\n`);
  try {
    const got = await work();
    rows.push(...(Array.isArray(got) ? got : [got]).map((r) => ({ ...r, step: name })));
  } catch (error) {
    // The table gets the first line; the whole message (steward's log tail) goes to stderr.
    process.stderr.write(`faults: ${name} crashed: ${(error as Error).message}\n`);
    rows.push({
      scenario: `${name}: CRASHED (${(error as Error).message.split('\n')[0]})`,
      runs: 0,
      messages: 0,
      replies: 0,
      duplicates: 0,
      losses: 0,
      doubleRuns: 0,
      p50Ms: null,
      p95Ms: null,
      step: name,
    });
  }
  process.stderr.write(`faults: ${name} done in ${Math.round((Date.now() - t) / 1000)} s\n`);
};
try {
  await step('telegram-kill', () => telegramKills(pg, num('FAULTS_KILLS', 30)));
  await step('postgres', () => postgresRestarts(pg, num('FAULTS_PG_RESTARTS', 6)));
  await step('proxy', () => misbehavingTelegram(pg, num('FAULTS_PROXY_MESSAGES', 30)));
  await step('flapping', () => modelFlapping(pg, num('FAULTS_FLAP_MESSAGES', 30)));
  await step('load', () => loadWithDigests(pg, num('FAULTS_LOAD_MESSAGES', 20)));
  await step('burst', () => burst(pg, num('FAULTS_BURST', 50)));
  await step('memory', async () => {
    const m = await memory(pg, num('FAULTS_RSS_TURNS', 1000));
    extra.rss = { beforeMb: m.rssBeforeMb, afterMb: m.rssAfterMb, every250TurnsMb: m.rssSeriesMb };
    return m;
  });
  await step('matrix-kill', () => matrixKills(pg, num('FAULTS_MATRIX_KILLS', 30)));
  await step('synapse', () => synapseRestarts(pg, num('FAULTS_SYNAPSE_RESTARTS', 8)));
  await step('matrix-rate', () => matrixRateLimits(pg, num('FAULTS_MATRIX_RATE_MESSAGES', 12)));
  await step('matrix-rooms', () => matrixRoomsAtOnce(pg, num('FAULTS_MATRIX_ROOMS', 20)));
} finally {
  await pg.destroy();
}
const results = process.env.FAULTS_OUT ?? resolve(import.meta.dirname, '../results');
const run = {
  date: new Date().toISOString(),
  seconds: Math.round((Date.now() - started) / 1000),
  node: process.version,
  ...extra,
  rows,
};
const merged = process.env.FAULTS_MERGE
  ? mergeResults(readResults(resolve(results, 'faults.json')), run)
  : run;
const printed = table(merged.rows);
console.log(printed);
const notes = merged.rows.filter((r) => r.notes).map((r) => `- ${r.scenario}: ${r.notes}`);
if (notes.length) console.log(`\n${notes.join('\n')}`);
writeFileSync(resolve(results, 'faults.json'), `${JSON.stringify(merged, null, 2)}\n`);
writeFileSync(
  resolve(results, 'faults.md'),
  `# npm run faults (${merged.date.slice(0, 10)}, ${merged.seconds} s)\n\n${printed}\n\n${notes.join('\n')}\n`,
);
