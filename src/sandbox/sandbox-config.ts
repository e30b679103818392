// What the sandbox is, as configured: one shape for sandboxd (which applies every field) and for
// steward (which only needs the socket and where chat's shell runs). Image, limits and network are
// sandboxd's own settings; nothing in a request can change them.
import { join } from 'node:path';
import { DEFAULT_SANDBOX_LIMITS } from '../limits.ts';

export const SANDBOX_SHELL_MODES = ['host', 'container'] as const;
export type SandboxShellMode = (typeof SANDBOX_SHELL_MODES)[number];
export const SANDBOX_NETWORKS = ['none', 'bridge'] as const;
export type SandboxNetwork = (typeof SANDBOX_NETWORKS)[number];

export const DEFAULT_SANDBOX_IMAGE = 'steward-sandbox:latest';
/** The uid (and, when the workspace has no group of its own, gid) every container runs as. */
export const SANDBOX_UID = 65534;

export interface SandboxConfig {
  /** The Unix socket sandboxd listens on and steward connects to. */
  socket: string;
  /** Must already exist on the engine; sandboxd never pulls. */
  image: string;
  /** Where chat's `shell` runs; unattended turns use the container whenever a sandbox is configured. */
  shell: SandboxShellMode;
  network: SandboxNetwork;
  memoryMb: number;
  cpus: number;
  pids: number;
  /** Only workspaces at or under this folder may be mounted (steward's `workspace`). */
  workspaceRoot: string;
  /** Set in the file or the environment (socket, image or shell): steward then uses it. */
  configured: boolean;
}

export interface SandboxFileKeys {
  socket?: string;
  image?: string;
  shell?: SandboxShellMode;
  network?: SandboxNetwork;
  memory_mb?: number;
  cpus?: number;
  pids?: number;
}

/** The sandbox settings with their defaults; `socket` is already resolved to an absolute path. */
export function resolveSandbox(keys: SandboxFileKeys, dataDir: string, workspace: string): SandboxConfig {
  return {
    socket: keys.socket ?? join(dataDir, 'sandboxd.sock'),
    image: keys.image ?? DEFAULT_SANDBOX_IMAGE,
    shell: keys.shell ?? 'host',
    network: keys.network ?? 'none',
    memoryMb: keys.memory_mb ?? DEFAULT_SANDBOX_LIMITS.memoryMb,
    cpus: keys.cpus ?? DEFAULT_SANDBOX_LIMITS.cpus,
    pids: keys.pids ?? DEFAULT_SANDBOX_LIMITS.pids,
    workspaceRoot: workspace,
    configured: keys.socket !== undefined || keys.image !== undefined || keys.shell !== undefined,
  };
}

/** Where one shell call runs: unattended turns always in the container when there is one. */
export function shellRunsIn(
  sandbox: Pick<SandboxConfig, 'shell' | 'configured'> | undefined,
  unattended: boolean,
): 'host' | 'container' {
  if (!sandbox?.configured) return 'host';
  return unattended || sandbox.shell === 'container' ? 'container' : 'host';
}
