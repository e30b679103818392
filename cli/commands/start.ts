import { TelegramChannelError } from '../../adapters/telegram/errors.ts';
import { TELEGRAM_CHANNEL, telegramChannel } from '../../adapters/telegram/telegram-channel.ts';
import { requireDefaultRoute } from '../../src/config/load.ts';
import { redact } from '../../src/config/secrets.ts';
import { buildAssistant } from '../build-assistant.ts';
import type { CliIo } from '../io.ts';
import { loadRuntime, openStore } from '../runtime.ts';

const HOW_TO_CONFIGURE = [
  'steward start: no channel is configured.',
  '  Telegram: set STEWARD_TELEGRAM_TOKEN and STEWARD_TELEGRAM_OWNER_ID',
  '  Matrix:   set STEWARD_MATRIX_HOMESERVER, STEWARD_MATRIX_ACCESS_TOKEN and STEWARD_MATRIX_OWNER',
  '  or talk to steward on this terminal with: steward chat',
].join('\n');

const NO_MATRIX = 'Matrix is configured, but this build has no adapter for it yet';

/** Runs every configured channel until SIGINT or SIGTERM. Matrix registers here when it lands. */
export async function startCommand(io: CliIo): Promise<number> {
  const runtime = loadRuntime(io);
  const { config, log } = runtime;
  const { telegram } = config;
  if (!telegram) {
    if (!config.matrix) {
      io.stderr.write(`${HOW_TO_CONFIGURE}\n`);
      return 2;
    }
    io.stderr.write(`steward start: ${NO_MATRIX}; use steward chat for now\n`);
    return 2;
  }
  if (config.matrix) io.stderr.write(`steward start: ${NO_MATRIX}; running Telegram only\n`);
  requireDefaultRoute(config);
  const db = await openStore(runtime);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const built = await buildAssistant(runtime, db, { [TELEGRAM_CHANNEL]: String(telegram.ownerId) });
    try {
      await telegramChannel({
        token: telegram.token,
        ownerId: telegram.ownerId,
        apiRoot: telegram.apiRoot,
        log,
      }).run(built.assistant, stop.signal);
      return 0;
    } finally {
      built.stop();
    }
  } catch (error) {
    if (!(error instanceof TelegramChannelError)) throw error;
    io.stderr.write(`steward start: ${redact(error.message, config.secrets)}\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await db.close();
  }
}
