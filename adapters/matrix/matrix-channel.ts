// The Matrix channel on matrix-bot-sdk. Every room the owner brought the bot into is a room of
// this channel; the owner's direct room is where prompts and notices go. The SDK does the talking
// (sends, edits, uploads, E2EE when its native library loads); the sync loop is ours, so its
// token lives in steward's database and is saved only once a batch is taken in.
import type { MatrixClient } from 'matrix-bot-sdk';
import type { Channel, ChannelPort, ReplySink } from '../../src/channel/port.ts';
import type { Logger } from '../../src/log.ts';
import type { Db } from '../../src/store/db.ts';
import { e2eeUnavailableText } from './check-e2ee.ts';
import { type PrivateRoom, privateRoom } from './direct-room.ts';
import { inboundRouter, MATRIX_CHANNEL, type Taken } from './inbound.ts';
import { type E2eeStatus, loadMatrixSdk, type Sdk } from './load-sdk.ts';
import { channelCrypto } from './matrix-crypto.ts';
import { matrixOps } from './matrix-ops.ts';
import { reshowPrompts } from './reshow-prompts.ts';
import { matrixStateStore } from './state-store.ts';
import { MatrixAuthError, runSync, type SyncBatch } from './sync-loop.ts';
import { type RendererDeps, turnRenderer } from './turn-renderer.ts';

export { MatrixAuthError } from './sync-loop.ts';
export { MATRIX_CHANNEL };

export interface MatrixChannelOptions {
  /** e.g. https://matrix.example.org */
  homeserver: string;
  /** The bot account's access token. */
  accessToken: string;
  /** The owner's MXID; nobody else is heard. */
  owner: string;
  db: Db;
  log: Logger;
  /**
   * End-to-end encryption (on unless false): the bot reads and writes encrypted rooms, its keys
   * kept in steward's database. Off, or when the crypto library does not load, encrypted rooms get
   * a notice and nothing in clear.
   */
  encryption?: boolean;
  /** Edits of one message are at least this far apart (homeservers rate-limit bots). */
  editIntervalMs?: number;
  typingEveryMs?: number;
  /** Long-poll time of one sync request. */
  pollMs?: number;
}

export interface MatrixReady {
  userId: string;
  directRoom: string;
  e2ee: E2eeStatus;
  /** The bot's device and its Ed25519 key (what the owner verifies), when encryption is on. */
  device?: { id: string; ed25519: string };
}

export interface MatrixChannel extends Channel {
  /** Resolves once connected and the first sync is taken in; rejects when `run` fails first. */
  ready(): Promise<MatrixReady>;
}

export function matrixChannel(options: MatrixChannelOptions): MatrixChannel {
  const { log, owner } = options;
  const homeserver = options.homeserver.replace(/\/+$/, '');
  const ready = Promise.withResolvers<MatrixReady>();
  ready.promise.catch(() => {});
  let sinkFor: ((room: string) => ReplySink) | undefined;
  let ownerRoom: PrivateRoom | undefined;
  const outbox = (room: string) => (sinkFor && room.startsWith('!') ? sinkFor(room) : undefined);

  return {
    name: MATRIX_CHANNEL,
    outbox,
    ownerRoom: () => ownerRoom?.current(),
    health: () => {
      const room = ownerRoom?.current();
      return room ? `syncing; private room ${room}` : 'connecting';
    },
    ready: () => ready.promise,

    async run(assistant: ChannelPort, signal: AbortSignal) {
      let inbound: ReturnType<typeof inboundRouter> | undefined;
      let releaseCrypto = () => {};
      try {
        const { sdk, e2ee } = await loadMatrixSdk();
        quietSdkLogs(sdk, log);
        const { client, userId, state, crypto } = await connect(sdk, e2ee, options, homeserver);
        releaseCrypto = () => {
          closeCrypto(client);
          crypto?.release();
        };
        const botRoom = await privateRoom(client, state, {
          owner,
          encrypt: client.crypto !== undefined,
          log,
        });
        await state.pruneSeen();

        const ops = matrixOps(client, log);
        const device = client.crypto
          ? { id: client.crypto.clientDeviceId, ed25519: client.crypto.clientDeviceEd25519 }
          : undefined;
        const posting = new Set<Promise<unknown>>();
        const rendererDeps: RendererDeps = {
          ops,
          state,
          log,
          privateRoom: botRoom,
          editIntervalMs: options.editIntervalMs ?? 2000,
          readOutput: (room, ref) =>
            assistant.readOutput({ channel: MATRIX_CHANNEL, room, senderId: owner, ref }),
          track: (work) => {
            posting.add(work);
            void work.finally(() => posting.delete(work));
          },
        };
        sinkFor = (room) => turnRenderer(rendererDeps, room);
        // The outbox works now: the core resumes cut-off turns before the first sync is taken in.
        await assistant.online(MATRIX_CHANNEL);
        // Before the first sync, so an answer in it finds its prompt. Only a restart has any (and
        // so a private room already): the room is not created here.
        await reshowPrompts({
          assistant,
          state,
          rooms: () => client.getJoinedRooms(),
          sinkFor: (room) => turnRenderer(rendererDeps, room),
          log,
        }).catch((error: Error) =>
          log.warn(`matrix: could not post waiting questions again: ${error.message}`),
        );

        const router = inboundRouter({
          assistant,
          owner,
          botId: userId,
          privateRoom: botRoom,
          e2ee,
          decrypts: client.crypto !== undefined,
          ops,
          media: { homeserver, accessToken: options.accessToken },
          state,
          log,
          device,
          sinkFor,
          readOutput: rendererDeps.readOutput,
          promptsPosted: async () => {
            await Promise.allSettled([...posting]);
          },
          typingEveryMs: options.typingEveryMs ?? 20_000,
        });
        inbound = router;
        ownerRoom = botRoom;
        log.info(`matrix: syncing as ${userId}; only ${owner} is heard`);
        let first = true;
        await runSync({
          homeserver,
          accessToken: options.accessToken,
          storage: {
            getSyncToken: async () => (await state.storage.getSyncToken()) as string | null,
            setSyncToken: (token) => Promise.resolve(state.storage.setSyncToken(token)),
          },
          handle: async (batch, initial) => {
            const taken = await takeIn(client, batch, (type, payload, decrypted) =>
              router.onEvent(type, payload, { initial, decrypted }),
            );
            if (first) {
              // A direct chat the owner opened while the bot was away is adopted by now; only
              // without one is a room created.
              const directRoom = await botRoom.ensure();
              log.info({ room: directRoom }, 'matrix: the private room with the owner');
              ready.resolve({ userId, directRoom, e2ee, ...(device ? { device } : {}) });
            }
            first = false;
            return taken;
          },
          signal,
          log,
          ...(options.pollMs ? { pollMs: options.pollMs } : {}),
        });
      } catch (error) {
        ready.reject(error);
        throw error;
      } finally {
        await inbound?.idle();
        sinkFor = undefined;
        releaseCrypto();
      }
    },
  };
}

/**
 * The SDK client, with E2EE when it is on and the library loaded: its store claimed for this
 * process and put back from the database, the crypto prepared for the rooms the bot is in.
 */
async function connect(sdk: Sdk, e2ee: E2eeStatus, options: MatrixChannelOptions, homeserver: string) {
  const { log } = options;
  const me = await whoAmI(new sdk.MatrixClient(homeserver, options.accessToken), homeserver);
  const userId = me.user_id;
  const state = matrixStateStore(options.db, userId);
  const crypto =
    e2ee.available && options.encryption !== false
      ? await channelCrypto({
          sdk,
          stores: e2ee.stores,
          db: options.db,
          state,
          account: userId,
          deviceId: me.device_id,
          log,
        })
      : undefined;
  const client = new sdk.MatrixClient(homeserver, options.accessToken, state.storage, crypto?.provider);
  if (!e2ee.available) log.warn(`matrix: ${e2eeUnavailableText(e2ee.reason)}`);
  else if (!crypto) log.warn('matrix: end-to-end encryption is turned off');
  try {
    if (client.crypto) {
      await client.crypto.prepare(await client.getJoinedRooms());
      queryKeysBeforeClaims(client, log);
      log.info(
        { device: client.crypto.clientDeviceId, ed25519: client.crypto.clientDeviceEd25519 },
        `matrix: end-to-end encryption on (${e2ee.available ? e2ee.engine : ''}); keys kept in the database`,
      );
    }
  } catch (error) {
    crypto?.release();
    throw keysClash(error, me.device_id);
  }
  return { client, userId, state, crypto };
}

interface SdkEngine {
  lock: { acquire<T>(name: string, work: () => Promise<T>): Promise<T> };
  machine: {
    updateTrackedUsers(ids: string[]): Promise<unknown>;
    getMissingSessions(ids: string[]): Promise<unknown>;
  };
  runOnly(...types: number[]): Promise<void>;
  processKeysClaimRequest(request: unknown): Promise<void>;
  addTrackedUsers(ids: string[]): Promise<void>;
}

/** matrix-bot-sdk's RustEngine lock that every sync batch takes, and its key-query request type. */
const SDK_SYNC_LOCK = 'sync';
const KEYS_QUERY = 1;

/**
 * matrix-bot-sdk tracks a member by marking them for a key query and at once asking for missing
 * sessions, before the query is sent; the crypto machine then waits 5 s for that query, holding the
 * lock every sync batch waits for. Each member event of an encrypted room did so: the owner joining
 * their direct chat held the next messages back 15 s. Sending the query first, as the SDK's own
 * prepareEncrypt does, ends the wait.
 */
function queryKeysBeforeClaims(client: MatrixClient, log: Logger) {
  const engine = (client.crypto as unknown as { engine?: SdkEngine } | undefined)?.engine;
  if (!engine) return;
  // The SDK calls this from its event listeners without catching: a failed request (the
  // homeserver restarting) would end the process. The members are tracked again before a send.
  engine.addTrackedUsers = (ids) =>
    engine.lock
      .acquire(SDK_SYNC_LOCK, async () => {
        await engine.machine.updateTrackedUsers(ids);
        await engine.runOnly(KEYS_QUERY);
        const claim = await engine.machine.getMissingSessions(ids);
        if (claim) await engine.processKeysClaimRequest(claim);
      })
      .catch((error: Error) => log.warn(`matrix: could not fetch room members' keys: ${error.message}`));
}

/**
 * A device whose keys on the homeserver are not the ones in this database (restored without its
 * key store, or a second steward on the same login) cannot be used again; the homeserver's refusal
 * of the upload becomes what to do about it.
 */
function keysClash(error: unknown, device: string | undefined): unknown {
  const text = String((error as { body?: { error?: string } }).body?.error ?? (error as Error).message ?? '');
  if (!/already exists/i.test(text)) return error;
  return new Error(
    `matrix: the bot's device ${device ?? ''} already has encryption keys on the homeserver that this database does not hold (restored without them, or another steward uses this login); log the bot in again for a new device and token`,
  );
}

/** Frees the crypto's WASM memory and IndexedDB connections; its store is in the database. */
function closeCrypto(client: MatrixClient) {
  const engine = (client.crypto as unknown as { engine?: { machine?: { close(): void } } } | undefined)
    ?.engine;
  engine?.machine?.close();
}

/** Who the token is for; a refused token or an unreachable homeserver becomes one clear line. */
async function whoAmI(
  client: MatrixClient,
  homeserver: string,
): Promise<{ user_id: string; device_id?: string }> {
  try {
    return await client.getWhoAmI();
  } catch (error) {
    const e = error as { statusCode?: number; errcode?: string; message?: string; code?: string };
    if (e.statusCode === 401 || e.errcode === 'M_UNKNOWN_TOKEN') {
      throw new MatrixAuthError(
        `matrix: ${homeserver} refused STEWARD_MATRIX_ACCESS_TOKEN; log the bot in again for a new token`,
      );
    }
    throw new Error(`matrix: cannot reach ${homeserver}: ${e.errcode ?? e.code ?? e.message ?? 'no answer'}`);
  }
}

/** The client's own listeners that must see events: its E2EE room tracking. */
const FORWARDED = new Set(['room.event', 'room.join']);

/**
 * Whether the SDK's own listeners get this event. A member event of an unencrypted room would
 * only make the SDK track that user's devices, and each such call can wait 5 s on a pending key
 * query while holding the lock every sync batch needs: 20 rooms joined at once held the owner's
 * messages back for 75-100 s. Encrypted rooms, and the event that turns encryption on, still go.
 */
export async function sdkNeeds(
  type: string,
  event: { type?: string } | undefined,
  encrypted: () => Promise<boolean>,
): Promise<boolean> {
  if (!FORWARDED.has(type)) return false;
  if (type !== 'room.event' || event?.type !== 'm.room.member') return true;
  return encrypted();
}

/**
 * Hands a batch to the SDK's own processing (which decrypts when E2EE is on), with an emit that
 * waits for each of our handlers to take its event; `taken` settles once every event is taken. processSync is protected in the SDK's types; it is the seam
 * MatrixClient.start() itself uses. Invites and account data are not re-emitted: the SDK's DM
 * tracker would rewrite m.direct from them.
 */
async function takeIn(
  client: MatrixClient,
  batch: SyncBatch,
  handle: (type: string, payload: unknown[], decrypted: boolean) => Promise<Taken | undefined>,
): Promise<Taken> {
  // The SDK announces each event it decrypted just before it emits it as a room event.
  const decrypted = new Set<string>();
  const taking: Promise<void>[] = [];
  const sdkClient = client as unknown as {
    processSync(raw: unknown, emit: (type: string, ...payload: unknown[]) => Promise<void>): Promise<void>;
  };
  await sdkClient.processSync(batch, async (type, ...payload) => {
    const event = payload[1] as { event_id?: string; type?: string } | undefined;
    const id = event?.event_id;
    if (type === 'room.decrypted_event' && id) decrypted.add(id);
    const encrypted = async () => (await client.crypto?.isRoomEncrypted(String(payload[0]))) === true;
    if (await sdkNeeds(type, event, encrypted)) client.emit(type, ...payload);
    const handed = await handle(type, payload, id !== undefined && decrypted.has(id));
    if (handed) taking.push(handed.taken);
  });
  const taken = Promise.all(taking).then(() => {});
  // The sync loop reads it only once earlier batches are taken: until then it is handled here.
  taken.catch(() => {});
  return { taken };
}

/** The SDK logs every failed request (a missing state event included); ours says what matters. */
function quietSdkLogs(sdk: Sdk, log: Logger) {
  const debug = (module: string, ...parts: unknown[]) =>
    log.debug(
      `matrix-bot-sdk ${module}: ${parts.map((p) => (typeof p === 'string' ? p : safeJson(p))).join(' ')}`,
    );
  sdk.LogService.setLogger({ info: debug, warn: debug, error: debug, debug: () => {}, trace: () => {} });
  sdk.LogService.setLevel(sdk.LogLevel.INFO);
}

function safeJson(value: unknown): string {
  if (value instanceof Error) return value.message;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
