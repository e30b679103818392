import { CONSOLE_CHANNEL, CONSOLE_OWNER, consoleChannel } from '../../adapters/console/console-channel.ts';
import { requireDefaultRoute } from '../../src/config/load.ts';
import { buildAssistant } from '../build-assistant.ts';
import type { CliIo } from '../io.ts';
import { loadRuntime, openStore } from '../runtime.ts';

export async function chatCommand(io: CliIo): Promise<number> {
  const runtime = loadRuntime(io, true);
  requireDefaultRoute(runtime.config);
  const db = await openStore(runtime);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const built = await buildAssistant(runtime, db, { [CONSOLE_CHANNEL]: CONSOLE_OWNER }).catch(
    async (error) => {
      await db.close();
      throw error;
    },
  );
  try {
    await consoleChannel({ input: io.stdin, output: io.stdout, errors: io.stderr }).run(
      built.assistant,
      stop.signal,
    );
    return 0;
  } finally {
    built.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await db.close();
  }
}
