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

/** The one shell tool, with what start-up found, and the sandbox when one is configured. */
export async function hostShellTool(mode: HostJailMode, sandbox?: SandboxConfig) {
  return createShellTool({
    ...(await findHostShell(mode)),
    hostJail: mode,
    ...(sandbox?.configured ? { sandbox: { config: sandbox, client: sandboxClient(sandbox.socket) } } : {}),
  });
}
