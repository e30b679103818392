// One steward on Matrix for a scenario: a private Synapse (fresh accounts: the owner, lifted out of
// the rate limits, and a bot), a direct room the owner opened, the scripted model, a private
// PostgreSQL database and the mark tool. The owner answers every question, by reaction (✅) or by
// a typed reply ("once") in turn. Counts come from the room's events as the owner's client reads
// them (/messages), never from steward's log.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { matrixHuman, messagesFrom, type RoomEvent } from '../../test/support/matrix-human.ts';
import { type ScriptedModel, startScriptedModel } from '../../test/support/scripted-model.ts';
import { tempDir } from '../../test/support/services.ts';
import { type PrivateSynapse, privateSynapse, type SynapseOptions } from './matrix-synapse.ts';
import { type FaultModelOptions, faultModel } from './model.ts';
import { type StewardProcess, startSteward } from './steward-process.ts';
import { awaitTexts } from './tally.ts';

const MARK_SERVER = resolve(import.meta.dirname, 'mark-server.ts');
const OWNER = '@owner:localhost';
const BOT = '@steward-bot:localhost';
const ASKING = 'React ✅ once';

export interface MatrixRigOptions {
  dbUrl: string;
  model: FaultModelOptions;
  synapse?: SynapseOptions;
  markPauseMs?: number;
  /** Extra config merged over the mark server's; given the DM room and the extra rooms. */
  config?: (room: string, rooms: string[]) => Record<string, unknown>;
  /** Group rooms the owner opens and invites the bot to before steward starts. */
  extraRooms?: number;
}

export interface MatrixRig {
  synapse: PrivateSynapse;
  model: ScriptedModel;
  markFile: string;
  room: string;
  /** The extra rooms, in the order they were opened. */
  rooms: string[];
  start(): Promise<StewardProcess>;
  say(text: string, inRoom?: string): Promise<number>;
  /** A room's whole timeline, oldest first (one full read of its /messages). */
  eventsIn(room: string): Promise<RoomEvent[]>;
  /** The bot's messages in a room, as they read now (one full read of its /messages). */
  textsIn(room: string): Promise<string[]>;
  /** Whether the bot has joined the room. */
  joined(room: string): Promise<boolean>;
  /** Reads the room's new events (the owner's /messages); the bot's messages as they read now. */
  refresh(): Promise<void>;
  texts(): string[];
  /** When the bot's events (messages, edits, reactions) reached the homeserver, oldest first. */
  botEventTimes(): number[];
  /** Answers every open question once (and again, typed, on one still open after 20 s). */
  answerQuestions(): Promise<number>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Retries a call the homeserver could not take (restarting, rate limited) until it goes through. */
async function persist<T>(work: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(300);
    }
  }
}

export async function matrixRig(options: MatrixRigOptions): Promise<MatrixRig> {
  const synapse = await privateSynapse(options.synapse);
  const ownerToken = await synapse.account('owner', { admin: true });
  await synapse.unlimit(ownerToken, OWNER);
  const botToken = await synapse.account('steward-bot');
  const owner = matrixHuman(synapse.url, ownerToken);
  const room = await owner.createRoom({ invite: [BOT], direct: true });
  const rooms: string[] = [];
  for (let i = 0; i < (options.extraRooms ?? 0); i++) rooms.push(await owner.createRoom({ invite: [BOT] }));

  const dir = tempDir('steward-faults-matrix-');
  const workspace = join(dir.path, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const markFile = join(dir.path, 'marks.log');
  const model = await startScriptedModel(faultModel(options.model));
  const configFile = join(dir.path, 'steward.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      mcp: {
        servers: {
          marks: {
            command: process.execPath,
            args: [MARK_SERVER],
            env: ['MARK_FILE', 'MARK_PAUSE_MS'],
            trusted: true,
            allow: ['mark'],
          },
        },
      },
      ...options.config?.(room, rooms),
    }),
  );
  const env: Record<string, string> = {
    STEWARD_CONFIG: configFile,
    STEWARD_DATA_DIR: dir.path,
    STEWARD_WORKSPACE: workspace,
    STEWARD_DATABASE_URL: options.dbUrl,
    STEWARD_MATRIX_HOMESERVER: synapse.url,
    STEWARD_MATRIX_ACCESS_TOKEN: botToken,
    STEWARD_MATRIX_OWNER: OWNER,
    STEWARD_LOG_LEVEL: process.env.FAULTS_LOG_LEVEL ?? 'info',
    STEWARD_MODEL_BASE_URL: model.baseUrl,
    STEWARD_MODEL: 'test-model',
    MARK_FILE: markFile,
    MARK_PAUSE_MS: String(options.markPauseMs ?? 300),
  };

  const events: RoomEvent[] = [];
  const known = new Set<string>();
  const page = (inRoom: string, from?: string) => {
    const query = new URLSearchParams({ dir: 'b', limit: '100', ...(from ? { from } : {}) });
    return persist(() =>
      owner.api<{ chunk: RoomEvent[]; end?: string }>(
        'GET',
        `/_matrix/client/v3/rooms/${encodeURIComponent(inRoom)}/messages?${query}`,
      ),
    );
  };
  const eventsIn = async (inRoom: string) => {
    const all: RoomEvent[] = [];
    for (let from: string | undefined, more = true; more; ) {
      const got = await page(inRoom, from);
      all.push(...got.chunk);
      more = Boolean(got.end) && got.chunk.length > 0;
      from = got.end;
    }
    return all.reverse();
  };
  const refresh = async () => {
    const fresh: RoomEvent[] = [];
    let from: string | undefined;
    for (;;) {
      const got = await page(room, from);
      const unseen = got.chunk.filter((e) => !known.has(e.event_id));
      fresh.push(...unseen);
      if (unseen.length < got.chunk.length || !got.end || got.chunk.length === 0) break;
      from = got.end;
    }
    for (const e of fresh.reverse()) {
      known.add(e.event_id);
      events.push(e);
    }
  };
  const answered = new Map<string, number>();
  let answers = 0;
  let log = '';
  let current: StewardProcess | undefined;
  return {
    synapse,
    model,
    markFile,
    room,
    async start() {
      if (current) log = current.log();
      current = startSteward(env, log);
      const from = log.length;
      const deadline = Date.now() + 120_000;
      // The first time, up once the owner's invite is accepted (the first sync taken in); after a
      // restart, once it syncs: with a token, its first long poll returns only when events come.
      const up = from === 0 ? /matrix: the private room with the owner/ : /matrix: syncing as/;
      while (!up.test(current.log().slice(from))) {
        if (current.exited()) throw new Error(`steward exited: ${current.log().slice(-2000)}`);
        if (Date.now() > deadline) throw new Error(`steward did not sync: ${current.log().slice(-2000)}`);
        await sleep(50);
      }
      return current;
    },
    rooms,
    async say(text, inRoom = room) {
      await persist(() => owner.say(inRoom, text));
      return Date.now();
    },
    joined: async (inRoom) => (await owner.membership(inRoom, BOT)) === 'join',
    eventsIn,
    textsIn: async (inRoom) => messagesFrom(await eventsIn(inRoom), BOT).map((m) => String(m.body ?? '')),
    refresh,
    texts: () => messagesFrom(events, BOT).map((m) => String(m.body ?? '')),
    botEventTimes: () =>
      events
        .filter((e) => e.sender === BOT && (e.type === 'm.room.message' || e.type === 'm.reaction'))
        .map((e) => e.origin_server_ts),
    async answerQuestions() {
      let n = 0;
      for (const m of messagesFrom(events, BOT)) {
        if (!String(m.body ?? '').includes(ASKING)) continue;
        const at = answered.get(m.eventId);
        if (at !== undefined && Date.now() - at < 20_000) continue;
        answered.set(m.eventId, Date.now());
        // Reactions and typed replies in turn; a second answer to one prompt is always typed
        // (Synapse refuses the same reaction twice).
        if (at === undefined && answers++ % 2 === 0) await persist(() => owner.react(room, m.eventId, '✅'));
        else
          await persist(() =>
            owner.say(room, 'once', { 'm.relates_to': { 'm.in_reply_to': { event_id: m.eventId } } }),
          );
        n++;
      }
      return n;
    },
    async close() {
      await current?.stop().catch(() => {});
      await model.close();
      await synapse.destroy();
      dir.remove();
    },
  };
}

/** Waits until every expected text shows (answering questions meanwhile); false at the deadline. */
export async function awaitMatrixReplies(
  rig: MatrixRig,
  expected: string[],
  timeoutMs: number,
  seenAt?: Map<string, number>,
): Promise<boolean> {
  const look = async () => {
    await rig.refresh();
    await rig.answerQuestions();
    return rig.texts();
  };
  return awaitTexts(look, expected, timeoutMs, 200, seenAt);
}
