// Matrix as a contract driver, against the test Synapse. The bot is an account of its own
// (@steward-contract-bot), registered with the homeserver's shared secret as
// scripts/test-services.sh registers its users, so this suite never shares a bot, its direct room
// or its sync stream with test/matrix.test.ts when vitest runs the two files at once. The owner
// and the stranger are the shared human accounts; the stranger is brought into the owner's direct
// room, so their messages and reactions land right where the owner's do.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { PermissionDecision } from '../../src/channel/port.ts';
import { type ChannelDriver, type PromptHandle, sleep } from './contract-drivers.ts';
import { type MatrixHuman, matrixHuman, messagesFrom, reactionsTo } from './matrix-human.ts';
import { openStewardDb, type RunningSteward, startSteward } from './matrix-steward.ts';
import type { MatrixEnv } from './services.ts';
import { tempDir } from './services.ts';

const BOT_USER = 'steward-contract-bot';
const KEYS: Record<PermissionDecision, string> = { once: '✅', session: '🔁', deny: '❌' };
/** Enough for a sync long-poll to deliver an event and the channel to drop it. */
const SETTLE_MS = 1200;

/** Where scripts/test-services.sh keeps Synapse and its registration secret. */
function synapseSecret(): string {
  const dir =
    process.env.STEWARD_TEST_SYNAPSE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'steward-test', 'synapse');
  const file = join(dir, 'shared-secret');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    throw new Error(
      `cannot register ${BOT_USER}: no Synapse shared secret at ${file} (set STEWARD_TEST_SYNAPSE_DIR)`,
    );
  }
}

async function post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    json: (await response.json().catch(() => ({}))) as Record<string, unknown>,
  };
}

/** The contract bot's access token: logged in on one fixed device, registered first if need be. */
async function contractBotToken(homeserver: string): Promise<string> {
  const password = `${BOT_USER}-test-password`;
  const login = () =>
    post(`${homeserver}/_matrix/client/v3/login`, {
      type: 'm.login.password',
      identifier: { type: 'm.id.user', user: BOT_USER },
      password,
      device_id: 'STEWARD_CONTRACT',
    });
  let answer = await login();
  if (answer.status === 403) {
    const nonce = (
      (await (await fetch(`${homeserver}/_synapse/admin/v1/register`)).json()) as { nonce: string }
    ).nonce;
    const mac = createHmac('sha1', synapseSecret())
      .update([nonce, BOT_USER, password, 'notadmin'].join('\0'))
      .digest('hex');
    const registered = await post(`${homeserver}/_synapse/admin/v1/register`, {
      nonce,
      username: BOT_USER,
      password,
      admin: false,
      mac,
    });
    if (registered.status !== 200 && registered.json.errcode !== 'M_USER_IN_USE')
      throw new Error(
        `registering ${BOT_USER}: HTTP ${registered.status} ${JSON.stringify(registered.json)}`,
      );
    answer = await login();
  }
  const token = answer.json.access_token;
  if (answer.status !== 200 || typeof token !== 'string')
    throw new Error(`logging ${BOT_USER} in: HTTP ${answer.status} ${JSON.stringify(answer.json)}`);
  return token;
}

export function matrixDriver(env: MatrixEnv): ChannelDriver {
  const owner: MatrixHuman = matrixHuman(env.homeserver, env.ownerToken);
  const stranger: MatrixHuman = matrixHuman(env.homeserver, env.strangerToken);
  let botEnv: MatrixEnv | undefined;
  let strangerId = '';
  let strangerInRoom = false;
  let running: { steward: RunningSteward; stop(): Promise<void> } | undefined;
  let since = 0;
  let promptsTaken = 0;

  const steward = () => {
    if (!running) throw new Error('matrix driver not started');
    return running.steward;
  };
  const room = () => steward().directRoom;
  const botSaid = async () => messagesFrom(await owner.events(room(), since), steward().botId);

  return {
    name: 'matrix',
    hasStranger: true,
    helpCommands: ['/help', '!help'],

    async prepare() {
      botEnv = { ...env, botToken: await contractBotToken(env.homeserver) };
      strangerId = await stranger.userId();
    },

    async start(model, workspace) {
      if (!botEnv) throw new Error('prepare the matrix driver first');
      const dir = tempDir('steward-contract-matrix-');
      const db = await openStewardDb(dir.path);
      since = Date.now();
      promptsTaken = 0;
      const started = await startSteward(botEnv, model, db, workspace).catch(async (error: Error) => {
        await db.close();
        dir.remove();
        throw error;
      });
      running = {
        steward: started,
        async stop() {
          await started.stop();
          await db.close();
          dir.remove();
        },
      };
      await owner.join(started.directRoom);
      if (!strangerInRoom && (await stranger.membership(started.directRoom, strangerId)) !== 'join') {
        await owner.invite(started.directRoom, strangerId).catch(() => {});
        await stranger.join(started.directRoom);
      }
      strangerInRoom = true;
    },

    async ownerSays(text) {
      await owner.say(room(), text);
    },
    async strangerSays(text) {
      await stranger.say(room(), text);
      await sleep(SETTLE_MS);
    },
    async waitForReply(text, nth = 1) {
      const botId = steward().botId;
      return owner.waitFor(
        room(),
        since,
        (events) => {
          const body = messagesFrom(events, botId).filter((m) => String(m.body).includes(text))[nth - 1]
            ?.body;
          return body === undefined ? undefined : String(body);
        },
        `a bot message "${text}" (${nth})`,
      );
    },
    async waitForPrompt() {
      const n = promptsTaken++;
      const botId = steward().botId;
      return owner.waitFor(
        room(),
        since,
        (events): PromptHandle | undefined => {
          const prompt = messagesFrom(events, botId).filter((m) =>
            String(m.body).startsWith('🔐 Permission needed'),
          )[n];
          // Reactions count only once the bot has seeded all three.
          return prompt && reactionsTo(events, prompt.eventId).length >= 3
            ? { id: prompt.eventId, text: String(prompt.body) }
            : undefined;
        },
        'a permission prompt with its three reactions',
      );
    },
    async approve(prompt, decision, as = 'owner') {
      await (as === 'owner' ? owner : stranger).react(room(), prompt.id, KEYS[decision]);
      if (as === 'stranger') await sleep(SETTLE_MS);
    },
    async botMessages() {
      return (await botSaid()).map((m) => String(m.body));
    },
    async stop() {
      await running?.stop();
      running = undefined;
    },
  };
}
