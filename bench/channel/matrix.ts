// The Matrix round trip: a real `steward start` on Synapse (STEWARD_TEST_MATRIX_*), the owner
// talking through the client-server API, and a sync loop as the owner that sees both the owner's
// message and the bot's reply arrive, so a homeserver's own delivery time can be taken out.
//
// The bot logs in a device of its own for each run (and logs it out after): a fresh steward
// database cannot take over the test device's encryption keys. Its password follows
// scripts/test-services.sh unless BENCH_MATRIX_BOT_PASSWORD says otherwise.
import { randomUUID } from 'node:crypto';
import { matrixHuman } from '../../test/support/matrix-human.ts';
import { reply, startScriptedModel } from '../../test/support/scripted-model.ts';
import { matrixEnv } from '../../test/support/services.ts';
import { freshState } from './backends.ts';
import { spawnSteward } from './proc.ts';
import { until } from './rig.ts';
import { median, quantile, round } from './stats.ts';
import type { Tree } from './tree.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const summary = (values: number[]) => ({ median: round(median(values)), p95: round(quantile(values, 0.95)) });

async function freshBotLogin(homeserver: string, botToken: string) {
  const bot = matrixHuman(homeserver, botToken);
  const userId = await bot.userId();
  const localpart = userId.slice(1, userId.indexOf(':'));
  const response = await fetch(`${homeserver}/_matrix/client/v3/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'm.login.password',
      identifier: { type: 'm.id.user', user: localpart },
      password: process.env.BENCH_MATRIX_BOT_PASSWORD ?? `${localpart}-test-password`,
      initial_device_display_name: 'steward channel bench',
    }),
  });
  if (!response.ok) throw new Error(`channel bench: the bot cannot log in a device: HTTP ${response.status}`);
  const { access_token: token } = (await response.json()) as { access_token: string };
  return { token, logout: () => matrixHuman(homeserver, token).api('POST', '/_matrix/client/v3/logout', {}) };
}

interface SyncPage {
  next_batch?: string;
  rooms?: {
    join?: Record<
      string,
      {
        timeline?: {
          events?: Array<{
            type: string;
            sender: string;
            content?: { body?: unknown; 'm.new_content'?: { body?: unknown } };
          }>;
        };
      }
    >;
  };
}

/** The owner's sync loop: when each event of `room` reached a syncing client (performance.now()). */
function ownerSync(homeserver: string, token: string) {
  const owner = matrixHuman(homeserver, token);
  const seen: Array<{ at: number; room: string; sender: string; body: string }> = [];
  const stop = new AbortController();
  const loop = (async () => {
    let since = '';
    while (!stop.signal.aborted) {
      const query = `timeout=30000${since ? `&since=${encodeURIComponent(since)}` : '&filter={"room":{"timeline":{"limit":1}}}'}`;
      const page = await fetch(`${homeserver}/_matrix/client/v3/sync?${query}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: stop.signal,
      }).then((r) => r.json() as Promise<SyncPage>);
      const at = performance.now();
      for (const [room, data] of Object.entries(page.rooms?.join ?? {})) {
        for (const e of data.timeline?.events ?? []) {
          const body = e.content?.['m.new_content']?.body ?? e.content?.body;
          if (e.type === 'm.room.message' && typeof body === 'string')
            seen.push({ at, room, sender: e.sender, body });
        }
      }
      since = page.next_batch ?? since;
    }
  })().catch(() => {});
  return {
    owner,
    seen,
    async close() {
      stop.abort();
      await loop;
    },
  };
}

/** `count` "hello" round trips from the owner to a `steward start` of `tree` on Synapse. */
export async function matrixRoundTrips(tree: Tree, count: number) {
  const env = matrixEnv();
  if (!env)
    throw new Error('channel bench: set the STEWARD_TEST_MATRIX_* variables, or BENCH_CHANNELS=telegram');
  const answered = new Map<string, number>();
  const run = Date.now();
  const model = await startScriptedModel((body) => {
    const messages = (body.messages as Array<{ role: string }> | undefined) ?? [];
    const marker =
      JSON.stringify([...messages].reverse().find((m) => m.role === 'user') ?? '')
        .match(/hello m\d+_\d+/g)
        ?.pop()
        ?.slice('hello '.length) ?? 'none';
    answered.set(marker, performance.now());
    return reply(`pong ${marker} done`);
  });
  const login = await freshBotLogin(env.homeserver, env.botToken);
  const state = await freshState(process.env.STEWARD_TEST_DATABASE_URL ? 'postgres' : 'pglite');
  const sync = ownerSync(env.homeserver, env.ownerToken);
  const proc = spawnSteward(
    tree.path,
    ['start'],
    {
      ...state.env,
      STEWARD_MODEL_BASE_URL: model.baseUrl,
      STEWARD_MODEL: 'test-model',
      STEWARD_MATRIX_HOMESERVER: env.homeserver,
      STEWARD_MATRIX_ACCESS_TOKEN: login.token,
      STEWARD_MATRIX_OWNER: env.owner,
      STEWARD_LOG_LEVEL: 'info',
    },
    state.cwd,
  );
  try {
    const room = await until(
      () => proc.stderr().match(/"room":"(![^"]+)".*the private room with the owner/)?.[1],
      () => `the bot's private room; steward said: ${proc.stderr().slice(-800)}`,
      90_000,
      20,
    );
    await sync.owner.join(room).catch(() => {});
    const bot = (await matrixHuman(env.homeserver, login.token).userId()) as string;
    const figures = {
      sync: [] as number[],
      total: [] as number[],
      toModel: [] as number[],
      afterModel: [] as number[],
    };
    for (let i = -1; i < count; i++) {
      // Unique to this run: the room and its history outlive a run.
      const marker = `m${run}_${i + 1}`;
      const sentAt = performance.now();
      await sync.owner.api(
        'PUT',
        `/_matrix/client/v3/rooms/${encodeURIComponent(room)}/send/m.room.message/${randomUUID()}`,
        {
          msgtype: 'm.text',
          body: `hello ${marker}`,
        },
      );
      const seenMsg = await until(
        () => sync.seen.find((e) => e.room === room && e.body === `hello ${marker}`)?.at,
        `hello ${marker}`,
        30_000,
        1,
      );
      const seenReply = await until(
        () =>
          sync.seen.find((e) => e.room === room && e.sender === bot && e.body.includes(`pong ${marker} done`))
            ?.at,
        `the reply to ${marker}`,
        30_000,
        1,
      );
      // The first exchange (the room's first turn after start) is not counted.
      if (i >= 0) {
        const modelAt = answered.get(marker) ?? Number.NaN;
        figures.sync.push(seenMsg - sentAt);
        figures.total.push(seenReply - sentAt);
        figures.toModel.push(modelAt - sentAt);
        figures.afterModel.push(seenReply - modelAt);
      }
      await sleep(300);
    }
    const beyond = figures.total.map((t, i) => t - 2 * (figures.sync[i] ?? 0));
    return {
      count,
      beyondSyncAndModelMs: summary(beyond),
      totalMs: summary(figures.total),
      syncMs: summary(figures.sync),
      sentToModelMs: summary(figures.toModel),
      modelToSeenReplyMs: summary(figures.afterModel),
    };
  } finally {
    await proc.stop();
    await sync.close();
    await login.logout().catch(() => {});
    await model.close();
    await state.remove();
  }
}
