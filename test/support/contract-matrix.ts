// Matrix as a contract driver, against the test Synapse. The bot is an account of its own
// (@steward-contract-bot), registered with the homeserver's shared secret as
// scripts/test-services.sh registers its users, so this suite never shares a bot, its direct room
// or its sync stream with test/matrix.test.ts when vitest runs the two files at once. The owner
// and the stranger are the shared human accounts; the stranger is brought into the owner's direct
// room, so their messages and reactions land right where the owner's do.
import type { PermissionDecision } from '../../src/channel/port.ts';
import { type ChannelDriver, type PromptHandle, sleep } from './contract-drivers.ts';
import { botAccountToken } from './matrix-accounts.ts';
import { type MatrixHuman, matrixHuman, messagesFrom, reactionsTo } from './matrix-human.ts';
import { openStewardDb, type RunningSteward, startSteward } from './matrix-steward.ts';
import type { MatrixEnv } from './services.ts';
import { tempDir } from './services.ts';

const BOT_USER = 'steward-contract-bot';
const KEYS: Record<PermissionDecision, string> = { once: '✅', session: '🔁', deny: '❌' };
/** Enough for a sync long-poll to deliver an event and the channel to drop it. */
const SETTLE_MS = 1200;

/** The contract bot's access token: logged in on one fixed device, registered first if need be. */
const contractBotToken = (homeserver: string) => botAccountToken(homeserver, BOT_USER, 'STEWARD_CONTRACT');

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
