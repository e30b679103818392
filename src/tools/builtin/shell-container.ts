// `shell` in a sandbox container: the command goes to sandboxd as it was judged, the output comes
// back as it streams, and the result says where it ran. When sandboxd is not there the call fails
// naming the socket: a call that must run in a container never runs on the host instead.
import { randomBytes } from 'node:crypto';
import type { SandboxClient } from '../../sandbox/client.ts';
import { type Captured, collector, resultParts } from './shell-output.ts';

export interface ContainerCall {
  command: string;
  timeoutS: number;
  /** Real path; sandboxd checks it is under its workspace root and mounts it at the same path. */
  workspace: string;
  maxOutput: number;
  signal: AbortSignal;
}

export async function runInContainer(client: SandboxClient, call: ContainerCall): Promise<string> {
  const out: Captured = { chunks: [], dropped: 0 };
  const err: Captured = { chunks: [], dropped: 0 };
  const collect = collector(call.maxOutput);
  const outcome = await client.run(
    {
      runId: `shell-${randomBytes(6).toString('hex')}`,
      command: call.command,
      timeoutMs: call.timeoutS * 1000,
      workspace: call.workspace,
    },
    { onStdout: collect(out), onStderr: collect(err), signal: call.signal },
  );
  if (call.signal.aborted) return 'cancelled; the container was killed and removed';
  if (outcome.kind === 'unreachable') {
    throw new Error(
      `not run: this call must run in the sandbox, and ${outcome.error}; it was not run on the host`,
    );
  }
  if (outcome.kind === 'refused') throw new Error(`not run: sandboxd refused it: ${outcome.error}`);
  const { result } = outcome;
  let head: string;
  if (result.timedOut) head = `timed out after ${call.timeoutS} s; the container was killed and removed`;
  else if (result.oomKilled)
    head = `killed: the command ran out of memory (the container's limit, sandbox.memory_mb; exit ${result.exitCode ?? 'none'})`;
  else if (result.cancelled || result.exitCode === null)
    head = 'cancelled; the container was killed and removed';
  else head = `exit ${result.exitCode}`;
  const parts = resultParts(head, out, err, call.maxOutput);
  parts.push(
    `[ran in a sandbox container: image ${result.image}, network ${result.network}, uid 65534; only the workspace is writable]`,
  );
  return parts.join('\n');
}
