import { CONSOLE_CHANNEL, CONSOLE_OWNER, consoleChannel } from '../../adapters/console/console-channel.ts';
import { requireDefaultRoute } from '../../src/config/load.ts';
import { createAssistant } from '../../src/core/assistant.ts';
import { buildRoute } from '../../src/gateway/build-route.ts';
import { builtinPureTools } from '../../src/tools/builtin/index.ts';
import { createToolRegistry } from '../../src/tools/registry.ts';
import type { CliIo } from '../io.ts';
import { loadRuntime, openStore } from '../runtime.ts';

export async function chatCommand(io: CliIo): Promise<number> {
  const runtime = loadRuntime(io, true);
  const { config, log } = runtime;
  requireDefaultRoute(config);
  const route = buildRoute('default', config.models);
  const db = await openStore(runtime);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const { loop, prices } = config.models;
    const assistant = createAssistant({
      db,
      log,
      route,
      prices,
      tools: createToolRegistry(builtinPureTools),
      owners: { [CONSOLE_CHANNEL]: CONSOLE_OWNER },
      workspace: config.workspace,
      ceilings: { maxSteps: loop.maxSteps, maxRepeats: loop.maxRepeats },
      parallelTools: loop.parallelTools,
      permissionTtlMs: loop.permissionTimeoutMs,
      toolTimeoutMs: loop.toolTimeoutMs,
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
