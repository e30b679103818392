import { MATRIX_CHANNEL, matrixChannel } from '../../adapters/matrix/matrix-channel.ts';
import { MatrixAuthError } from '../../adapters/matrix/sync-loop.ts';
import { TelegramChannelError } from '../../adapters/telegram/errors.ts';
import { TELEGRAM_CHANNEL, telegramChannel } from '../../adapters/telegram/telegram-channel.ts';
import type { Channel } from '../../src/channel/port.ts';
import { requireDefaultRoute } from '../../src/config/load.ts';
import { redact } from '../../src/config/secrets.ts';
import type { CliIo } from '../io.ts';
import { runChannels } from '../run-channels.ts';
import { loadRuntime, openStore } from '../runtime.ts';

const HOW_TO_CONFIGURE = [
  'steward start: no channel is configured.',
  '  Telegram: set STEWARD_TELEGRAM_TOKEN and STEWARD_TELEGRAM_OWNER_ID',
  '  Matrix:   set STEWARD_MATRIX_HOMESERVER, STEWARD_MATRIX_ACCESS_TOKEN and STEWARD_MATRIX_OWNER',
  '  or talk to steward on this terminal with: steward chat',
].join('\n');

/** Runs every configured channel, and the digest scheduler, until SIGINT or SIGTERM. */
export async function startCommand(io: CliIo): Promise<number> {
  const runtime = loadRuntime(io);
  const { config, log } = runtime;
  const { telegram, matrix } = config;
  if (!telegram && !matrix) {
    io.stderr.write(`${HOW_TO_CONFIGURE}\n`);
    return 2;
  }
  requireDefaultRoute(config);
  const db = await openStore(runtime);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const channels: Channel[] = [];
    const owners: Record<string, string> = {};
    if (telegram) {
      channels.push(
        telegramChannel({
          token: telegram.token,
          ownerId: telegram.ownerId,
          apiRoot: telegram.apiRoot,
          log,
          ...(telegram.webhook ? { webhook: telegram.webhook } : {}),
        }),
      );
      owners[TELEGRAM_CHANNEL] = String(telegram.ownerId);
    }
    if (matrix) {
      channels.push(
        matrixChannel({
          homeserver: matrix.homeserver,
          accessToken: matrix.accessToken,
          owner: matrix.owner,
          db,
          log,
        }),
      );
      owners[MATRIX_CHANNEL] = matrix.owner;
    }
    await runChannels(runtime, db, channels, owners, stop.signal);
    return 0;
  } catch (error) {
    if (!(error instanceof TelegramChannelError || error instanceof MatrixAuthError)) throw error;
    io.stderr.write(`steward start: ${redact(error.message, config.secrets)}\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await db.close();
  }
}
