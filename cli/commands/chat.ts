import { CONSOLE_CHANNEL, CONSOLE_OWNER, consoleChannel } from '../../adapters/console/console-channel.ts';
import { requireDefaultRoute } from '../../src/config/load.ts';
import type { CliIo } from '../io.ts';
import { runChannels } from '../run-channels.ts';
import { loadRuntime, openStore } from '../runtime.ts';

export async function chatCommand(io: CliIo): Promise<number> {
  const runtime = loadRuntime(io, true);
  requireDefaultRoute(runtime.config);
  const db = await openStore(runtime);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const terminal = consoleChannel({ input: io.stdin, output: io.stdout, errors: io.stderr });
    await runChannels(runtime, db, [terminal], { [CONSOLE_CHANNEL]: CONSOLE_OWNER }, stop.signal);
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await db.close();
  }
}
