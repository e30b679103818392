import { CONSOLE_CHANNEL, CONSOLE_OWNER, consoleChannel } from '../../adapters/console/console-channel.ts';
import { requireModel } from '../../src/config/load.ts';
import { createAssistant } from '../../src/core/assistant.ts';
import { openAiCompatible } from '../../src/gateway/openai-compatible.ts';
import type { CliIo } from '../io.ts';
import { loadRuntime, openStore } from '../runtime.ts';

export async function chatCommand(io: CliIo): Promise<number> {
  const runtime = loadRuntime(io, true);
  const { config, log } = runtime;
  const model = requireModel(config);
  const db = await openStore(runtime);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const assistant = createAssistant({
      db,
      log,
      owners: { [CONSOLE_CHANNEL]: CONSOLE_OWNER },
      route: { name: 'default', model, provider: openAiCompatible(config.model) },
    });
    await consoleChannel({ input: io.stdin, output: io.stdout, errors: io.stderr }).run(
      assistant,
      stop.signal,
    );
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await db.close();
  }
}
