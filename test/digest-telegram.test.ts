// A digest fired by a controlled clock reaches a real channel: the Telegram adapter against the
// telegram-test-api emulator, with the scripted model and PGlite.

import { afterEach, describe, expect, it } from 'vitest';
import { TELEGRAM_CHANNEL, telegramChannel } from '../adapters/telegram/telegram-channel.ts';
import { createLogger } from '../src/log.ts';
import type { Db } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { runChannel } from './support/run-channel.ts';
import {
  type DigestHarness,
  digestRuns,
  startDigestHarness,
  TestClock,
} from './support/scheduler-harness.ts';
import { reply, type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { embeddedBackend } from './support/services.ts';
import { startTelegramEmulator, type TelegramEmulator, waitFor } from './support/telegram-emulator.ts';

const OWNER = 4242;
// Monday 30 March 2026, 07:25 in Paris.
const MONDAY_0725 = new Date('2026-03-30T05:25:00Z');
const MINUTE = 60_000;

describe('a scheduled digest through the Telegram channel', () => {
  let emulator: TelegramEmulator;
  let model: ScriptedModel;
  let db: Db;
  let cleanup: () => Promise<void>;
  let harness: DigestHarness;
  const abort = new AbortController();
  afterEach(async () => {
    abort.abort();
    await harness?.stop();
    await model?.close();
    await emulator?.stop();
    await cleanup?.();
  });

  it('fires at 07:30 Paris time and posts the reply into the owner chat; a failed run is reported', async () => {
    emulator = await startTelegramEmulator();
    model = await startScriptedModel([
      reply('Markets: quiet open, bonds flat.'),
      { status: 500, body: { error: { message: 'down' } } },
    ]);
    ({ db, cleanup } = await embeddedBackend.open());
    await migrate(db);
    const channel = telegramChannel({
      token: emulator.token,
      ownerId: OWNER,
      apiRoot: emulator.apiRoot,
      log: createLogger('silent', []),
      transformers: [emulator.recorder],
      editIntervalMs: 100,
      polling: { idlePollMs: 25, timeoutSeconds: 0 },
    });
    harness = await startDigestHarness({
      db,
      modelUrl: model.baseUrl,
      clock: new TestClock(MONDAY_0725),
      channels: [TELEGRAM_CHANNEL],
      outboxFor: (ch, room) => (ch === TELEGRAM_CHANNEL ? channel.outbox(room) : undefined),
      ownerSink: (ch) => (ch === TELEGRAM_CHANNEL ? channel.outbox(String(OWNER)) : undefined),
    });
    const running = runChannel(channel, harness.assistant, abort.signal);

    const added = await harness.command(
      '/digest add "30 7 * * 1-5" Europe/Paris here markets-digest',
      TELEGRAM_CHANNEL,
      String(OWNER),
    );
    expect(added).toMatch(/^Added digest markets-digest/);
    await harness.advance(4 * MINUTE);
    expect(emulator.botMessages(OWNER)).toEqual([]);
    await harness.advance(2 * MINUTE);
    const post = await waitFor(
      () => emulator.botMessages(OWNER).find((m) => m.text.includes('Markets: quiet open, bonds flat.')),
      'the digest post in the owner chat',
    );
    expect(post.chatId).toBe(OWNER);
    expect(model.requests[0]?.tools).toBeDefined();
    const [run] = await digestRuns(db);
    expect(run).toMatchObject({ schedule_id: 'markets-digest', outcome: 'posted' });
    // The run records when it was delivered and the id of the message that holds the post.
    const delivery = await db.query<{ delivered_at: Date | null; message_ids: string[] }>(
      'select delivered_at, message_ids from digest_runs order by id limit 1',
    );
    expect(delivery.rows[0]?.delivered_at).toBeInstanceOf(Date);
    expect(delivery.rows[0]?.message_ids).toEqual([String(post.messageId)]);

    // The next weekday's fire: the model is down; the owner is told, with the digest's id.
    await harness.advance(24 * 60 * MINUTE);
    await waitFor(
      () => emulator.botMessages(OWNER).find((m) => /markets-digest/.test(m.text) && /fail/i.test(m.text)),
      'the failure notice',
    );
    abort.abort();
    await running;
  });
});
