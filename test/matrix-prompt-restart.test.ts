// A question still waiting after a restart whose prompt never made it into Matrix is posted again,
// and answering that one runs the call. Found by `npm run faults` ("matrix: kill -9 mid-turn"): a
// kill after the question was recorded and before its prompt was stored left the owner nothing to
// answer, and the turn waited until a new message dropped it. Real Synapse, a bot of its own; the
// crash's state is made by removing the stored prompt between two runs.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../src/store/db.ts';
import { botAccountToken } from './support/matrix-accounts.ts';
import { matrixHuman, messagesFrom, reactionsTo } from './support/matrix-human.ts';
import { openStewardDb, type RunningSteward, startSteward } from './support/matrix-steward.ts';
import { reply, type ScriptedModel, type ScriptStep, startScriptedModel } from './support/scripted-model.ts';
import { type MatrixEnv, matrixEnv, tempDir } from './support/services.ts';

const env = matrixEnv();

describe.skipIf(!env)('Matrix: a waiting question after a restart', () => {
  const base = env ?? ({} as MatrixEnv);
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it('whose prompt was never stored is posted again, and answering it runs the call', async () => {
    const user = `steward-reshow-${randomUUID().slice(0, 8)}`;
    const botEnv = { ...base, botToken: await botAccountToken(base.homeserver, user, 'STEWARD_RESHOW') };
    const owner = matrixHuman(base.homeserver, base.ownerToken);
    const botId = await matrixHuman(base.homeserver, botEnv.botToken).userId();
    const dir = tempDir('steward-matrix-reshow-');
    cleanup.push(() => dir.remove());
    const workspace = join(dir.path, 'workspace');
    mkdirSync(join(workspace, 'build'), { recursive: true });
    const db: Db = await openStewardDb(dir.path);
    cleanup.push(() => db.close());
    const run = async (script: ScriptStep[]) => {
      const model: ScriptedModel = await startScriptedModel(script);
      const steward: RunningSteward = await startSteward(botEnv, model, db, workspace);
      cleanup.push(() => model.close());
      return {
        steward,
        stop: async () => {
          await steward.stop();
          await model.close();
        },
      };
    };
    const since = Date.now();
    const prompts = async () =>
      owner.waitFor(
        dm,
        since,
        (events) => {
          const all = messagesFrom(events, botId).filter((m) =>
            String(m.body).startsWith('🔐 Permission needed'),
          );
          return all.length && all.every((p) => reactionsTo(events, p.eventId).length >= 3) ? all : undefined;
        },
        'prompts with their reactions',
      );

    const dm = await owner.createRoom({ invite: [botId], direct: true });
    const first = await run([
      {
        chunks: [],
        toolCalls: [{ id: 'call_1', name: 'shell', argumentChunks: ['{"command":"rm -rf build"}'] }],
      },
    ]);
    cleanup.push(() => first.steward.stop());
    await owner.say(dm, 'delete the build folder');
    const [shown] = await prompts();
    await first.stop();
    // What a kill between posting the prompt and storing it leaves behind.
    await db.query('delete from matrix_prompts');

    const second = await run([reply('Removed.')]);
    cleanup.push(() => second.steward.stop());
    const again = await owner.waitFor(
      dm,
      since,
      (events) =>
        messagesFrom(events, botId).find(
          (m) =>
            m.eventId !== shown?.eventId &&
            String(m.body).startsWith('🔐 Permission needed') &&
            reactionsTo(events, m.eventId).length >= 3,
        ),
      'the question posted again',
    );
    expect(again.body).toContain('rm -rf build');
    await owner.react(dm, again.eventId, '✅');
    await owner.waitFor(
      dm,
      since,
      (events) => messagesFrom(events, botId).find((m) => m.body === 'Removed.'),
      'the final reply',
    );
    expect(existsSync(join(workspace, 'build'))).toBe(false);
  });
});
