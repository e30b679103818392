// `steward sandbox check` and doctor's sandbox line: `id -u` in a fresh container, through sandboxd
// exactly as a shell call would go, reported as one object.
import { mkdir, realpath } from 'node:fs/promises';
import type { SandboxClient } from './client.ts';
import { SANDBOX_UID, type SandboxConfig } from './sandbox-config.ts';

export interface SandboxCheck {
  ok: boolean;
  image: string;
  uid: number | null;
  network: string;
  reason?: string;
}

export async function checkSandbox(
  client: SandboxClient,
  config: Pick<SandboxConfig, 'image' | 'network' | 'workspaceRoot'>,
): Promise<SandboxCheck> {
  const base = { image: config.image, network: config.network };
  await mkdir(config.workspaceRoot, { recursive: true });
  let stdout = '';
  const outcome = await client.run(
    { runId: 'check', command: 'id -u', timeoutMs: 30_000, workspace: await realpath(config.workspaceRoot) },
    {
      onStdout: (chunk) => {
        stdout += chunk.toString('utf8');
      },
      onStderr: () => {},
    },
  );
  if (outcome.kind !== 'ran') return { ok: false, ...base, uid: null, reason: outcome.error };
  const { result } = outcome;
  const uid = /^\d+$/.test(stdout.trim()) ? Number(stdout.trim()) : null;
  const report = { ...base, image: result.image, network: result.network, uid };
  if (result.exitCode !== 0)
    return { ok: false, ...report, reason: `id -u exited ${result.exitCode ?? 'without a status'}` };
  if (uid !== SANDBOX_UID)
    return { ok: false, ...report, reason: `the container ran as uid ${uid}, not ${SANDBOX_UID}` };
  return { ok: true, ...report };
}
