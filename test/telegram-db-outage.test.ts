// The database stops while the owner's message arrives (a private PostgreSQL cluster, really
// stopped): long polling does not confirm the update, keeps trying it, and once the database is
// back the message is answered exactly once.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Transformer } from 'grammy';
import { afterEach, describe, expect, it } from 'vitest';
import { telegramChannel } from '../adapters/telegram/telegram-channel.ts';
import { buildAssistant } from '../cli/build-assistant.ts';
import { openStore } from '../cli/runtime.ts';
import { loadConfig } from '../src/config/load.ts';
import { createLogger } from '../src/log.ts';
import { runChannel } from './support/run-channel.ts';
import { reply, type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { type PrivatePostgres, privatePostgres, tempDir } from './support/services.ts';
import { startTelegramEmulator, type TelegramEmulator, waitFor } from './support/telegram-emulator.ts';

const OWNER = 4242;
const silent = createLogger('silent', []);
const pgServer = await privatePostgres();

describe.skipIf(!pgServer)('Telegram polling while the database is down', () => {
  const pgs = pgServer as PrivatePostgres;
  let emulator: TelegramEmulator | undefined;
  let model: ScriptedModel | undefined;
  let dir: ReturnType<typeof tempDir> | undefined;
  afterEach(async () => {
    await emulator?.stop();
    await model?.close();
    dir?.remove();
    await pgs.destroy();
  });

  it('does not confirm the message while the database is stopped, and answers it once after', async () => {
    dir = tempDir();
    const workspace = join(dir.path, 'workspace');
    mkdirSync(workspace, { recursive: true });
    emulator = await startTelegramEmulator();
    model = await startScriptedModel([reply('Back and answering.')]);
    const config = loadConfig(
      {
        STEWARD_DATA_DIR: dir.path,
        STEWARD_WORKSPACE: workspace,
        STEWARD_DATABASE_URL: pgs.url,
        STEWARD_MODEL_BASE_URL: model.baseUrl,
        STEWARD_MODEL: 'test-model',
        STEWARD_TELEGRAM_TOKEN: emulator.token,
        STEWARD_TELEGRAM_OWNER_ID: String(OWNER),
        STEWARD_TELEGRAM_API_ROOT: emulator.apiRoot,
      },
      dir.path,
    );
    const runtime = { config, log: silent };
    const db = await openStore(runtime);
    const built = await buildAssistant(runtime, db, { telegram: String(OWNER) });
    // What each getUpdates asked for (its offset) and what it brought (update ids).
    const offsets: number[] = [];
    const fetched: number[] = [];
    const polls: Transformer = async (prev, method, payload, signal) => {
      const result = await prev(method, payload, signal);
      if (method === 'getUpdates') {
        offsets.push((payload as { offset?: number }).offset ?? 0);
        const updates = (result as { result?: Array<{ update_id: number }> }).result ?? [];
        fetched.push(...updates.map((u) => u.update_id));
      }
      return result;
    };
    const abort = new AbortController();
    const channel = telegramChannel({
      token: emulator.token,
      ownerId: OWNER,
      apiRoot: emulator.apiRoot,
      log: silent,
      transformers: [polls, emulator.recorder],
      editIntervalMs: 100,
      polling: { idlePollMs: 25, timeoutSeconds: 0, retry: { tries: 1000, firstMs: 100, maxMs: 300 } },
    });
    const done = runChannel(channel, built.assistant, abort.signal);
    try {
      await waitFor(() => offsets.length > 0, 'the first poll');
      await pgs.stop();
      const client = emulator.user(OWNER);
      await client.say('are you there?');
      const id = await waitFor(() => fetched[0], 'the update to be fetched');
      const seenAt = offsets.length;
      await new Promise((r) => setTimeout(r, 1500));
      expect(emulator.botMessages(OWNER)).toEqual([]);
      expect(model.requests).toHaveLength(0);
      // Every poll since: still at or below the update, so Telegram would keep it.
      expect(offsets.slice(seenAt).every((o) => o <= id)).toBe(true);
      expect(offsets.length).toBeGreaterThan(seenAt);

      await pgs.start();
      await waitFor(
        () => emulator?.botMessages(OWNER).find((m) => m.text.includes('Back and answering.')),
        'the answer once the database is back',
        30_000,
      );
      await waitFor(() => offsets.some((o) => o > id), 'the update to be confirmed');
      await new Promise((r) => setTimeout(r, 500));
      expect(emulator.botMessages(OWNER).filter((m) => m.text.includes('Back and answering.'))).toHaveLength(
        1,
      );
      expect(model.requests).toHaveLength(1);
      const logged = await db.query<{ n: number }>(
        "select count(*)::int as n from session_events where kind = 'user_message'",
      );
      expect(logged.rows[0]?.n).toBe(1);
    } finally {
      abort.abort();
      await done;
      built.stop();
      await db.close();
    }
  }, 90_000);
});
