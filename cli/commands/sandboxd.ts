// `steward sandboxd`: the sandbox daemon in the foreground until SIGTERM. The only steward process
// that opens the Docker socket (DOCKER_HOST or /var/run/docker.sock); dockerode is loaded here only,
// so no other command ever loads it.

import type { CliIo } from '../io.ts';
import { loadRuntime } from '../runtime.ts';

export async function sandboxdCommand(io: CliIo): Promise<number> {
  const { config, log } = loadRuntime(io);
  const { default: Docker } = await import('dockerode');
  const { createSandboxd } = await import('../../src/sandbox/daemon.ts');
  const docker = new Docker();
  try {
    await docker.ping();
  } catch (error) {
    io.stderr.write(
      `steward: sandboxd cannot reach Docker at ${io.env.DOCKER_HOST ?? '/var/run/docker.sock'} (${(error as Error).message}); start the engine or set DOCKER_HOST\n`,
    );
    return 1;
  }
  const daemon = createSandboxd({ docker, config: config.sandbox, log });
  await daemon.start();
  await new Promise<void>((done) => {
    process.once('SIGTERM', done);
    process.once('SIGINT', done);
  });
  await daemon.stop();
  log.info('sandboxd stopped');
  return 0;
}
