// The container one run gets, from sandboxd's configuration and the validated request only. Pure,
// so every isolation setting is table-tested; the Docker tests then check the engine honours them.
import type { ContainerCreateOptions } from 'dockerode';
import { DEFAULT_SANDBOX_LIMITS } from '../limits.ts';
import type { SandboxRequest } from './protocol.ts';
import { SANDBOX_UID, type SandboxConfig } from './sandbox-config.ts';
import { bashArgs } from './shell-dialect.ts';

/** The label every container of one sandboxd carries; its value is that sandboxd's socket path. */
export const OWNER_LABEL = 'steward.sandboxd';
export const RUN_LABEL = 'steward.run';

/** The command's whole environment: fixed here, so none of steward's or sandboxd's variables exist. */
export function containerEnv(workspace: string): string[] {
  return [
    'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    `HOME=${workspace}`,
    'LANG=C.UTF-8',
    'TERM=dumb',
  ];
}

export interface SpecInput {
  config: Pick<SandboxConfig, 'image' | 'network' | 'memoryMb' | 'cpus' | 'pids' | 'socket'>;
  request: SandboxRequest;
  /** The real path of the request's workspace, checked to be under the workspace root. */
  workspace: string;
  /** The group that owns the workspace; the container's user joins it to write there. */
  gid: number;
}

export function containerSpec({ config, request, workspace, gid }: SpecInput): ContainerCreateOptions {
  const bytes = config.memoryMb * 1024 * 1024;
  return {
    Image: config.image,
    // umask 002 so what the command creates stays writable for the workspace's group (steward);
    // the command stays one argv element of bash, in the dialect the classifier judged.
    Cmd: ['/bin/sh', '-c', 'umask 002 && exec /bin/bash "$@"', 'sh', ...bashArgs(request.command)],
    Entrypoint: [],
    Env: containerEnv(workspace),
    User: `${SANDBOX_UID}:${gid}`,
    WorkingDir: workspace,
    Labels: { [OWNER_LABEL]: config.socket, [RUN_LABEL]: request.runId },
    NetworkDisabled: config.network === 'none',
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: false,
    Tty: false,
    HostConfig: {
      Mounts: [{ Type: 'bind', Source: workspace, Target: workspace, ReadOnly: false }],
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': `rw,nosuid,nodev,size=${DEFAULT_SANDBOX_LIMITS.tmpfsMb}m` },
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      PidsLimit: config.pids,
      Memory: bytes,
      MemorySwap: bytes, // no swap: a hog meets the limit instead of the disk
      NanoCpus: Math.round(config.cpus * 1e9),
      NetworkMode: config.network,
      IpcMode: 'private',
      AutoRemove: false, // sandboxd removes it after reading its exit status and OOM flag
      Init: false,
    },
  };
}
