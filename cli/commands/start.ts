import type { Channel } from '../../src/channel/port.ts';
import { requireDefaultRoute } from '../../src/config/load.ts';
import { redact } from '../../src/config/secrets.ts';
import type { Db } from '../../src/store/db.ts';
import type { CliIo } from '../io.ts';
import { loadRuntime, openStore, type Runtime } from '../runtime.ts';
import { stageMarks } from '../startup-timing.ts';

const HOW_TO_CONFIGURE = [
  'steward start: no channel is configured.',
  '  Telegram: set STEWARD_TELEGRAM_TOKEN and STEWARD_TELEGRAM_OWNER_ID',
  '  Matrix:   set STEWARD_MATRIX_HOMESERVER, STEWARD_MATRIX_ACCESS_TOKEN and STEWARD_MATRIX_OWNER',
  '  or talk to steward on this terminal with: steward chat',
].join('\n');

/** Runs every configured channel, and the digest scheduler, until SIGINT or SIGTERM. */
export async function startCommand(io: CliIo): Promise<number> {
  const mark = stageMarks(io.env, io.stderr);
  mark('start command loaded');
  const runtime = loadRuntime(io);
  mark('config loaded');
  const { config } = runtime;
  const { telegram, matrix } = config;
  if (!telegram && !matrix) {
    io.stderr.write(`${HOW_TO_CONFIGURE}\n`);
    return 2;
  }
  requireDefaultRoute(config);
  // The core and the adapters (each only when configured) load while the database opens.
  const opening = openStore(runtime).finally(() => mark('database open and migrated'));
  const [db, adapters, { runChannels }] = await Promise.all([
    opening,
    loadAdapters(runtime).finally(() => mark('adapters loaded')),
    import('../run-channels.ts').finally(() => mark('core loaded')),
  ]).catch(async (error: unknown) => {
    // An open pool would keep the process alive after the error is reported.
    await opening.then(
      (opened) => opened.close(),
      () => {},
    );
    throw error;
  });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const { channels, owners } = buildChannels(runtime, db, adapters);
    await runChannels(runtime, db, channels, owners, stop.signal, mark);
    return 0;
  } catch (error) {
    if (!adapters.ending.some((kind) => error instanceof kind)) throw error;
    io.stderr.write(`steward start: ${redact((error as Error).message, config.secrets)}\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await db.close();
  }
}

type Adapters = Awaited<ReturnType<typeof loadAdapters>>;

/** The configured platforms' adapter modules (a Telegram-only steward never loads Matrix's). */
async function loadAdapters({ config }: Runtime) {
  const [telegram, matrix] = await Promise.all([
    config.telegram ? import('../../adapters/telegram/telegram-channel.ts') : undefined,
    config.matrix ? import('../../adapters/matrix/matrix-channel.ts') : undefined,
  ]);
  /** The errors that end a channel: printed as one line, exit 1. */
  const ending: Array<abstract new (...args: never[]) => Error> = [
    ...(telegram ? [telegram.TelegramChannelError] : []),
    ...(matrix ? [matrix.MatrixAuthError] : []),
  ];
  return { telegram, matrix, ending };
}

function buildChannels({ config, log }: Runtime, db: Db, adapters: Adapters) {
  const channels: Channel[] = [];
  const owners: Record<string, string> = {};
  if (config.telegram && adapters.telegram) {
    const { telegram } = config;
    channels.push(
      adapters.telegram.telegramChannel({
        token: telegram.token,
        ownerId: telegram.ownerId,
        apiRoot: telegram.apiRoot,
        log,
        ...(telegram.webhook ? { webhook: telegram.webhook } : {}),
      }),
    );
    owners[adapters.telegram.TELEGRAM_CHANNEL] = String(telegram.ownerId);
  }
  if (config.matrix && adapters.matrix) {
    const { matrix } = config;
    channels.push(
      adapters.matrix.matrixChannel({
        homeserver: matrix.homeserver,
        accessToken: matrix.accessToken,
        owner: matrix.owner,
        db,
        log,
      }),
    );
    owners[adapters.matrix.MATRIX_CHANNEL] = matrix.owner;
  }
  return { channels, owners };
}
