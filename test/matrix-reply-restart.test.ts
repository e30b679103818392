// A reply that reached the room before a crash is not posted again when the turn resumes. Found by
// `npm run faults` ("matrix: kill -9 mid-turn"): a kill after the final reply reached Synapse and
// before the turn was marked ended made the next start send the answer from the log as a second
// message. Real Synapse; the crash's state is made by removing `turn_ended` (and its delivery row)
// between two runs, as a kill in that moment leaves it.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMatrixSdk } from '../adapters/matrix/load-sdk.ts';
import { matrixOps } from '../adapters/matrix/matrix-ops.ts';
import { type RendererDeps, turnRenderer } from '../adapters/matrix/turn-renderer.ts';
import { createLogger } from '../src/log.ts';
import type { Db } from '../src/store/db.ts';
import { botAccountToken } from './support/matrix-accounts.ts';
import { matrixHuman, messagesFrom } from './support/matrix-human.ts';
import { openStewardDb, startSteward } from './support/matrix-steward.ts';
import { reply, type ScriptStep, startScriptedModel } from './support/scripted-model.ts';
import { type MatrixEnv, matrixEnv, tempDir } from './support/services.ts';

const env = matrixEnv();

describe.skipIf(!env)('Matrix: a reply sent just before a crash', () => {
  const base = env ?? ({} as MatrixEnv);
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function rig(label: string) {
    const user = `steward-${label}-${randomUUID().slice(0, 8)}`;
    const botEnv = { ...base, botToken: await botAccountToken(base.homeserver, user, `STEWARD_${label}`) };
    const owner = matrixHuman(base.homeserver, base.ownerToken);
    const botId = await matrixHuman(base.homeserver, botEnv.botToken).userId();
    const dir = tempDir(`steward-matrix-${label}-`);
    cleanup.push(() => dir.remove());
    const workspace = join(dir.path, 'workspace');
    mkdirSync(workspace, { recursive: true });
    const db: Db = await openStewardDb(dir.path);
    cleanup.push(() => db.close());
    const run = async (script: ScriptStep[]) => {
      const model = await startScriptedModel(script);
      const steward = await startSteward(botEnv, model, db, workspace);
      cleanup.push(() => steward.stop());
      cleanup.push(() => model.close());
      return { model, stop: () => steward.stop() };
    };
    const dm = await owner.createRoom({ invite: [botId], direct: true });
    /** What a kill after the reply was sent and before the turn was marked ended leaves behind. */
    const unend = async () => {
      // The log is append-only by trigger; only this test's stand-in for a kill steps around it.
      await db.query('alter table session_events disable trigger session_events_append_only');
      await db.query(`delete from session_events where kind = 'turn_ended'`);
      await db.query('alter table session_events enable trigger session_events_append_only');
      await db.query('delete from deliveries');
    };
    const answers = async (text: string) =>
      messagesFrom(await owner.events(dm), botId).filter((m) => String(m.body).includes(text));
    /** The turn is marked ended again (its delivery recorded with it). */
    const ended = async () =>
      Number((await db.query<{ n: string }>('select count(*) as n from deliveries')).rows[0]?.n) > 0;
    return { owner, botId, dm, run, unend, answers, ended };
  }

  it('is the same message after the resumed turn sends it again, showing the final text', async () => {
    const { owner, botId, dm, run, unend, answers, ended } = await rig('REPLYONCE');
    const since = Date.now();
    const first = await run([{ chunks: ['The answer ', 'is forty-two, ', 'as computed.'] }]);
    await owner.say(dm, 'what is the answer?');
    await owner.waitFor(
      dm,
      since,
      (events) => messagesFrom(events, botId).find((m) => m.body === 'The answer is forty-two, as computed.'),
      'the first reply',
    );
    await first.stop();
    await first.model.close();
    await unend();

    // The answer is in the log, so the resumed turn sends it without asking the model.
    const second = await run([]);
    await owner.waitFor(
      dm,
      since,
      (events) => messagesFrom(events, botId).find((m) => String(m.body).startsWith('Resuming a turn')),
      'the resume notice',
    );
    // The resumed turn is done once it has marked the turn ended again.
    await waitUntil(ended, 'the resumed turn to end');
    const shown = await answers('forty-two');
    expect(shown.map((m) => m.body)).toEqual(['The answer is forty-two, as computed.']);
    expect(second.model.requests.length).toBe(0);
  });

  it('keys of different turns never meet: each answer is a message of its own', async () => {
    const { owner, botId, dm, run, answers } = await rig('REPLYNEW');
    const since = Date.now();
    const first = await run([reply('First answer.'), reply('Second answer.')]);
    await owner.say(dm, 'one');
    await owner.waitFor(
      dm,
      since,
      (e) => messagesFrom(e, botId).find((m) => m.body === 'First answer.'),
      'one',
    );
    await owner.say(dm, 'two');
    await owner.waitFor(
      dm,
      since,
      (e) => messagesFrom(e, botId).find((m) => m.body === 'Second answer.'),
      'two',
    );
    await first.stop();
    expect((await answers('First answer.')).length).toBe(1);
    expect((await answers('Second answer.')).length).toBe(1);
  });
});

describe.skipIf(!env)('Matrix: the turn renderer under a restart', () => {
  const base = env ?? ({} as MatrixEnv);

  /** A renderer as a fresh process has it: its own client, nothing in memory. */
  async function process(token: string) {
    const { sdk } = await loadMatrixSdk();
    const quiet = () => {};
    sdk.LogService.setLogger({ info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet });
    const log = createLogger('silent', [token]);
    const ops = matrixOps(new sdk.MatrixClient(base.homeserver, token), log, () => Promise.resolve());
    const deps = { ops, log, editIntervalMs: 50, track: () => {} } as unknown as RendererDeps;
    return { ops, sink: (room: string) => turnRenderer(deps, room) };
  }

  it('a recovered turn makes the message an earlier process left half-streamed show the answer', async () => {
    const token = await botAccountToken(base.homeserver, `steward-half-${randomUUID().slice(0, 8)}`, 'HALF');
    const bot = matrixHuman(base.homeserver, token);
    const room = await bot.createRoom();
    const turnId = randomUUID();
    // The earlier process: step 1 streamed its first words, then the kill.
    const before = (await process(token)).sink(room);
    await before({ type: 'turn_started', turnId });
    await before({ type: 'text_delta', text: 'Half of', step: 1 });
    await waitUntil(
      async () => messagesFrom(await bot.events(room), await bot.userId()).length === 1,
      'the first words',
    );
    // The next process finds the answer in the log and sends it as step 1's reply.
    const after = (await process(token)).sink(room);
    await after({ type: 'turn_started', turnId, recovered: true });
    const delivery = await after({ type: 'reply', text: 'Half of the answer, and the rest.', step: 1 });

    const mine = messagesFrom(await bot.events(room), await bot.userId());
    expect(mine.map((m) => m.body)).toEqual(['Half of the answer, and the rest.']);
    expect(delivery).toEqual({ delivered: true, messageIds: [mine[0]?.eventId] });
  });

  it("a digest's post, sent again by its turn resumed after a crash, is the message already there", async () => {
    const token = await botAccountToken(
      base.homeserver,
      `steward-digest-${randomUUID().slice(0, 8)}`,
      'DIGEST',
    );
    const bot = matrixHuman(base.homeserver, token);
    const room = await bot.createRoom();
    const turnId = randomUUID();
    // The digest runner passes the turn's start and its reply (src/scheduler/runner.ts), then the kill.
    const before = (await process(token)).sink(room);
    await before({ type: 'turn_started', turnId });
    const first = await before({ type: 'reply', text: 'Markets: quiet open.', step: 1 });
    const after = (await process(token)).sink(room);
    await after({ type: 'turn_started', turnId, recovered: true });
    const again = await after({ type: 'reply', text: 'Markets: quiet open.', step: 1 });

    const mine = messagesFrom(await bot.events(room), await bot.userId());
    expect(mine.map((m) => m.body)).toEqual(['Markets: quiet open.']);
    expect(again).toEqual(first);
  });

  it('without a step (a command reply, a late reply) every send is a message of its own', async () => {
    const token = await botAccountToken(
      base.homeserver,
      `steward-nostep-${randomUUID().slice(0, 8)}`,
      'NOSTEP',
    );
    const bot = matrixHuman(base.homeserver, token);
    const room = await bot.createRoom();
    const turnId = randomUUID();
    for (const text of ['same words', 'same words']) {
      const sink = (await process(token)).sink(room);
      await sink({ type: 'turn_started', turnId, recovered: true });
      await sink({ type: 'reply', text });
    }
    expect(messagesFrom(await bot.events(room), await bot.userId()).map((m) => m.body)).toEqual([
      'same words',
      'same words',
    ]);
  });
});

async function waitUntil(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}
