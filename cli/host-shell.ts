import { sandboxClient } from '../src/sandbox/client.ts';
import { type HostJailMode, probeJail } from '../src/sandbox/host-jail.ts';
import type { SandboxConfig } from '../src/sandbox/sandbox-config.ts';
import { resolveBash } from '../src/sandbox/shell-dialect.ts';
import { createShellTool } from '../src/tools/builtin/shell.ts';

/** bash and the host jail as they are on this machine, found once (start-up, or doctor). */
export async function findHostShell(mode: HostJailMode) {
  const bash = await resolveBash();
  const jail =
    mode === 'off' || bash.kind !== 'ok'
      ? ({
          kind: 'none',
          reason: mode === 'off' ? 'sandbox.host_jail is off' : 'bash is not usable',
        } as const)
      : await probeJail({ bash: bash.path });
  return { bash, jail };
}

/**
 * The one shell tool, and the sandbox when one is configured. It finds bash and probes the host
 * jail at its first call, not at start-up: that spawns processes, 40-60 ms the first poll waited for.
 */
export function hostShellTool(mode: HostJailMode, sandbox?: SandboxConfig) {
  return createShellTool({
    hostJail: mode,
    ...(sandbox?.configured ? { sandbox: { config: sandbox, client: sandboxClient(sandbox.socket) } } : {}),
  });
}
