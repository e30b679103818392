// The delivery ledger: every final reply is recorded with the platform's ids or its failure, and a
// reply the channel could not deliver is posted to its room once the channel is back, once.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Transformer } from 'grammy';
import { afterEach, describe, expect, it } from 'vitest';
import { telegramChannel } from '../adapters/telegram/telegram-channel.ts';
import { buildAssistant } from '../cli/build-assistant.ts';
import { openStore } from '../cli/runtime.ts';
import type { Delivery, OutboundEvent } from '../src/channel/port.ts';
import { createAssistant } from '../src/core/assistant.ts';
import { lateReplyText } from '../src/core/late-replies.ts';
import { createLogger } from '../src/log.ts';
import type { Db } from '../src/store/db.ts';
import { sessionGrants } from '../src/store/grants.ts';
import { migrate } from '../src/store/migrate.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import { conservativeGate } from './support/gates.ts';
import { runChannel } from './support/run-channel.ts';
import { reply, type ScriptedModel, scriptedRoute, startScriptedModel } from './support/scripted-model.ts';
import { embeddedBackend, tempDir } from './support/services.ts';
import {
  emulatorRuntime,
  startTelegramEmulator,
  type TelegramEmulator,
  waitFor,
} from './support/telegram-emulator.ts';

const silent = createLogger('silent', []);

interface Row {
  kind: string;
  room: string;
  status: string;
  message_ids: string[];
  error: string | null;
  body: string | null;
  reported_at: Date | null;
}
const ledger = async (db: Db) =>
  (
    await db.query<Row>(
      'select kind, room, status, message_ids, error, body, reported_at from deliveries order by id',
    )
  ).rows;

describe('the delivery ledger', () => {
  let db: Db;
  let cleanup: (() => Promise<void>) | undefined;
  let model: ScriptedModel | undefined;
  afterEach(async () => {
    await model?.close();
    await cleanup?.();
    model = undefined;
    cleanup = undefined;
  });

  const assistantOn = (m: ScriptedModel) =>
    createAssistant({
      db,
      gate: conservativeGate(sessionGrants(db, () => new Date())),
      log: silent,
      owners: { test: 'owner' },
      route: scriptedRoute(m.baseUrl),
      tools: createToolRegistry([]),
      workspace: '/tmp',
    });

  it('records a delivered reply with its ids, and a failed one with its text, posted late once', async () => {
    ({ db, cleanup } = await embeddedBackend.open());
    await migrate(db);
    model = await startScriptedModel([reply('First answer.'), reply('Second answer.')]);
    const a = assistantOn(model);
    const posted: OutboundEvent[] = [];
    // The room's channel: the first reply reaches it, the second does not, the late post does.
    const results: Delivery[] = [
      { delivered: true, messageIds: ['m1'] },
      { delivered: false, messageIds: [] },
      { delivered: true, messageIds: ['m3'] },
    ];
    const sink = async (e: OutboundEvent) => {
      if (e.type !== 'reply') return;
      posted.push(e);
      return results.shift();
    };
    await a.start({ outbox: (channel) => (channel === 'test' ? sink : undefined) });
    await a.handle({ channel: 'test', room: 'r', senderId: 'owner', text: 'one' }, sink);
    await a.handle({ channel: 'test', room: 'r', senderId: 'owner', text: 'two' }, sink);
    let rows = await ledger(db);
    expect(rows.map((r) => [r.kind, r.status, r.message_ids])).toEqual([
      ['reply', 'delivered', ['m1']],
      ['reply', 'failed', []],
    ]);
    expect(rows[0]?.body).toBeNull();
    expect(rows[1]?.body).toBe('Second answer.');
    expect(rows[1]?.error).toMatch(/did not confirm/);

    // Digests wait for this (Lifecycle.whenOnline): pending until the channel says it is up.
    let up = false;
    void a.whenOnline('test').then(() => {
      up = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(up).toBe(false);
    // The channel comes online: the failed reply goes out with a line saying it is late.
    await a.online('test');
    await a.whenOnline('test');
    expect(up).toBe(true);
    await waitFor(() => posted.length === 3, 'the late reply');
    await a.idle();
    expect((posted[2] as { text: string }).text).toMatch(
      /^This reply could not be delivered at .* UTC, so here it is now:\n\nSecond answer\.$/,
    );
    rows = await ledger(db);
    expect(rows.map((r) => [r.kind, r.status, r.message_ids])).toEqual([
      ['reply', 'delivered', ['m1']],
      ['reply', 'failed', []],
      ['late_reply', 'delivered', ['m3']],
    ]);
    expect(rows[1]?.reported_at).not.toBeNull();
    // Another message from the owner nudges a new round: nothing is posted twice.
    model.requests.length = 0;
    await a.handle({ channel: 'test', room: 'r', senderId: 'owner', text: '/help' }, async () => {});
    await new Promise((r) => setTimeout(r, 200));
    await a.idle();
    expect(posted).toHaveLength(3);
    await a.stop();
  }, 30_000);

  it('keeps trying a late reply whose post fails, up to the limit, and says so in the log', async () => {
    ({ db, cleanup } = await embeddedBackend.open());
    await migrate(db);
    model = await startScriptedModel([reply('Never arrives.')]);
    const a = assistantOn(model);
    let tries = 0;
    const failing = async (e: OutboundEvent) => {
      if (e.type !== 'reply') return;
      tries++;
      return { delivered: false, messageIds: [] };
    };
    await a.start({ outbox: () => failing });
    await a.handle({ channel: 'test', room: 'r', senderId: 'owner', text: 'hi' }, failing);
    const nudge = () =>
      a.handle({ channel: 'test', room: 'r', senderId: 'owner', text: '/help' }, async () => {});
    const attempts = async () =>
      (
        await db.query<{ report_attempts: number; reported_at: Date | null }>(
          `select report_attempts, reported_at from deliveries where kind = 'reply'`,
        )
      ).rows[0];
    // Coming online starts the first late round, and each nudge may start the next. A nudge during
    // a round is dropped (the sweeper would cover it), so nudge until five late tries are counted.
    await a.online('test');
    const deadline = Date.now() + 20_000;
    let nudged = Date.now();
    for (;;) {
      const row = await attempts();
      if (Number(row?.report_attempts) >= 5 && row?.reported_at === null) break;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for five late tries (${tries - 1} so far)`);
      if (Date.now() - nudged > 200) {
        await nudge();
        nudged = Date.now();
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(tries).toBe(6);
    // More nudges, each given time for a round: nothing is tried again.
    for (let round = 0; round < 3; round++) {
      await nudge();
      await new Promise((r) => setTimeout(r, 200));
      await a.idle();
    }
    // The turn's own try plus five late ones (Limits.lateReplyTries), then only the log.
    expect(tries).toBe(6);
    const rows = await ledger(db);
    expect(rows.filter((r) => r.kind === 'late_reply').map((r) => r.status)).toEqual(Array(5).fill('failed'));
    expect(rows[0]?.reported_at).toBeNull();
    await a.stop();
  }, 30_000);

  it('is pure about the late line', () => {
    expect(lateReplyText('x', new Date('2026-01-02T03:04:59Z'))).toBe(
      'This reply could not be delivered at 2026-01-02 03:04 UTC, so here it is now:\n\nx',
    );
  });
});

describe('a Telegram reply that cannot be sent', () => {
  let emulator: TelegramEmulator | undefined;
  let model: ScriptedModel | undefined;
  let dir: ReturnType<typeof tempDir> | undefined;
  afterEach(async () => {
    await emulator?.stop();
    await model?.close();
    dir?.remove();
  });

  it('is recorded as failed, not dropped, and reaches the owner once Telegram answers again', async () => {
    dir = tempDir();
    const workspace = join(dir.path, 'workspace');
    mkdirSync(workspace, { recursive: true });
    emulator = await startTelegramEmulator();
    model = await startScriptedModel([reply('Lost on the way.'), reply('Second.')]);
    const runtime = emulatorRuntime({
      dataDir: dir.path,
      workspace,
      modelUrl: model.baseUrl,
      emulator,
      ownerId: 77,
    });
    const db = await openStore(runtime);
    const built = await buildAssistant(runtime, db, { telegram: '77' });
    // Telegram refuses every send while `down` (a 400 is not retried).
    let down = true;
    const outage: Transformer = async (prev, method, payload, signal) => {
      if (down && method === 'sendMessage')
        return { ok: false, error_code: 400, description: 'Bad Request: chat is unavailable' } as never;
      return prev(method, payload, signal);
    };
    const abort = new AbortController();
    const channel = telegramChannel({
      token: emulator.token,
      ownerId: 77,
      apiRoot: emulator.apiRoot,
      log: silent,
      transformers: [outage, emulator.recorder],
      editIntervalMs: 50,
      polling: { idlePollMs: 25, timeoutSeconds: 0 },
    });
    const done = runChannel(channel, built.assistant, abort.signal);
    try {
      const owner = emulator.user(77);
      await owner.say('first');
      const failed = await waitFor(
        () => model && model.requests.length === 1,
        'the first turn to reach the model',
      );
      expect(failed).toBe(true);
      await waitFor(() => emulator?.allRead(), 'the update to be read');
      let rows: Row[] = [];
      for (let i = 0; i < 100 && rows.length === 0; i++) {
        rows = await ledger(db);
        await new Promise((r) => setTimeout(r, 50));
      }
      // The owner's message nudged a late post at once; Telegram was still refusing it.
      expect(rows.map((r) => [r.kind, r.status, r.body])[0]).toEqual(['reply', 'failed', 'Lost on the way.']);
      expect(emulator.botMessages(77)).toEqual([]);

      down = false;
      await owner.say('second');
      const late = await waitFor(
        () => emulator?.botMessages(77).find((m) => m.text.includes('Lost on the way.')),
        'the late reply',
      );
      expect(late.text).toMatch(/^This reply could not be delivered at/);
      await waitFor(() => emulator?.botMessages(77).find((m) => m.text === 'Second.'), 'the second reply');
      await new Promise((r) => setTimeout(r, 300));
      expect(emulator.botMessages(77).filter((m) => m.text.includes('Lost on the way.'))).toHaveLength(1);
      rows = await ledger(db);
      expect(rows.map((r) => [r.kind, r.status])).toEqual(
        expect.arrayContaining([
          ['reply', 'failed'],
          ['late_reply', 'delivered'],
          ['reply', 'delivered'],
        ]),
      );
      const ids = rows.filter((r) => r.status === 'delivered').flatMap((r) => r.message_ids);
      const shown = emulator.botMessages(77).map((m) => String(m.messageId));
      expect(ids.every((id) => shown.includes(id))).toBe(true);
    } finally {
      abort.abort();
      await done;
      built.stop();
      await db.close();
    }
  }, 60_000);
});
