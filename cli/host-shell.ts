import { sandboxClient } from '../src/sandbox/client.ts';
import type { HostJailMode } from '../src/sandbox/host-jail.ts';
import type { SandboxConfig } from '../src/sandbox/sandbox-config.ts';
import { createShellTool } from '../src/tools/builtin/shell.ts';

/**
 * The one shell tool, and the sandbox when one is configured. It finds bash and the host jail at
 * its first host call: that spawns processes, about 25 ms the first poll used to wait for.
 */
export function hostShellTool(mode: HostJailMode, sandbox?: SandboxConfig) {
  return createShellTool({
    hostJail: mode,
    ...(sandbox?.configured ? { sandbox: { config: sandbox, client: sandboxClient(sandbox.socket) } } : {}),
  });
}
