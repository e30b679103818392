import type { CliIo } from '../io.ts';
import { loadRuntime } from '../runtime.ts';

const HOW_TO_CONFIGURE = [
  'steward start: no channel is configured.',
  '  Telegram: set STEWARD_TELEGRAM_TOKEN and STEWARD_TELEGRAM_OWNER_ID',
  '  Matrix:   set STEWARD_MATRIX_HOMESERVER, STEWARD_MATRIX_ACCESS_TOKEN and STEWARD_MATRIX_OWNER',
  '  or talk to steward on this terminal with: steward chat',
].join('\n');

/** Runs every configured channel. The Telegram and Matrix adapters register here as they land. */
export async function startCommand(io: CliIo): Promise<number> {
  const { config } = loadRuntime(io);
  const configured = [config.telegram && 'Telegram', config.matrix && 'Matrix'].filter(Boolean);
  if (configured.length === 0) {
    io.stderr.write(`${HOW_TO_CONFIGURE}\n`);
    return 2;
  }
  io.stderr.write(
    `steward start: ${configured.join(' and ')} ${configured.length > 1 ? 'are' : 'is'} configured, but this build has no adapter for ${configured.length > 1 ? 'them' : 'it'} yet; use steward chat for now\n`,
  );
  return 2;
}
