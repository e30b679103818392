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
import { inboundRouter, MATRIX_CHANNEL } from './inbound.ts';
import { type E2eeStatus, loadMatrixSdk, type Sdk } from './load-sdk.ts';
import { matrixOps } from './matrix-ops.ts';
import { matrixStateStore } from './state-store.ts';
import { MatrixAuthError, runSync, type SyncBatch } from './sync-loop.ts';
import { type RendererDeps, turnRenderer } from './turn-renderer.ts';

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
  /** Where E2EE keys are kept when the native library loads; without it, E2EE stays off. */
  cryptoDir?: string;
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
    ready: () => ready.promise,

    async run(assistant: ChannelPort, signal: AbortSignal) {
      let inbound: ReturnType<typeof inboundRouter> | undefined;
      try {
        const { sdk, e2ee } = await loadMatrixSdk();
        quietSdkLogs(sdk, log);
        const userId = await whoAmI(new sdk.MatrixClient(homeserver, options.accessToken), homeserver);
        const state = matrixStateStore(options.db, userId);
        const cryptoStore =
          e2ee.available && options.cryptoDir
            ? new sdk.RustSdkCryptoStorageProvider(options.cryptoDir, e2ee.storeType as never)
            : undefined;
        const client = new sdk.MatrixClient(homeserver, options.accessToken, state.storage, cryptoStore);
        if (!e2ee.available) log.warn(`matrix: ${e2eeUnavailableText(e2ee.reason)}`);
        else if (!cryptoStore)
          log.warn('matrix: end-to-end encryption is off: no folder for its keys (cryptoDir)');
        if (client.crypto) await client.crypto.prepare(await client.getJoinedRooms());
        const botRoom = await privateRoom(client, state, {
          owner,
          encrypt: client.crypto !== undefined,
          log,
        });
        await state.pruneSeen();

        const ops = matrixOps(client, log);
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

        const router = inboundRouter({
          assistant,
          owner,
          botId: userId,
          privateRoom: botRoom,
          e2ee,
          decrypts: client.crypto !== undefined,
          ops,
          state,
          log,
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
            await takeIn(client, batch, (type, payload) => router.onEvent(type, payload, initial));
            if (first) {
              // A direct chat the owner opened while the bot was away is adopted by now; only
              // without one is a room created.
              const directRoom = await botRoom.ensure();
              log.info({ room: directRoom }, 'matrix: the private room with the owner');
              ready.resolve({ userId, directRoom, e2ee });
            }
            first = false;
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
      }
    },
  };
}

/** The bot's user id; a refused token or an unreachable homeserver becomes one clear line. */
async function whoAmI(client: MatrixClient, homeserver: string): Promise<string> {
  try {
    return (await client.getWhoAmI()).user_id;
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
 * Hands a batch to the SDK's own processing (which decrypts when E2EE is on), with an emit that
 * waits for each of our handlers. processSync is protected in the SDK's types; it is the seam
 * MatrixClient.start() itself uses. Invites and account data are not re-emitted: the SDK's DM
 * tracker would rewrite m.direct from them.
 */
async function takeIn(
  client: MatrixClient,
  batch: SyncBatch,
  handle: (type: string, payload: unknown[]) => Promise<void>,
): Promise<void> {
  const sdkClient = client as unknown as {
    processSync(raw: unknown, emit: (type: string, ...payload: unknown[]) => Promise<void>): Promise<void>;
  };
  await sdkClient.processSync(batch, async (type, ...payload) => {
    if (FORWARDED.has(type)) client.emit(type, ...payload);
    await handle(type, payload);
  });
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
