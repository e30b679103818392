// The sandbox's cost per shell call: the median wall time of `true` through sandboxd in a fresh
// container (create, start, wait, remove) against the same `true` through the host shell (bash in
// the bubblewrap jail). Needs a Docker engine and the tiny test image (scripts/test-services.sh);
// without one it reports why instead of a figure.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../src/log.ts';
import { sandboxClient } from '../src/sandbox/client.ts';
import { createSandboxd, imagePresent } from '../src/sandbox/daemon.ts';
import { resolveSandbox } from '../src/sandbox/sandbox-config.ts';
import { createShellTool } from '../src/tools/builtin/shell.ts';

const RUNS = 15;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function timed(run: () => Promise<unknown>): Promise<number[]> {
  await run(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  return times;
}

export async function containerOverhead() {
  const image = process.env.STEWARD_TEST_SANDBOX_IMAGE ?? 'steward-sandbox-tiny:latest';
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-sbx-'));
  const workspace = join(dir, 'ws');
  mkdirSync(workspace);
  const ctx = {
    signal: new AbortController().signal,
    sessionId: 'b',
    workspace,
    log: createLogger('silent', []),
    now: () => new Date(),
  };
  const host = median(await timed(() => createShellTool().execute({ command: 'true' }, ctx)));
  const base = { name: 'container-overhead', runs: RUNS, hostMedianMs: Math.round(host * 10) / 10 };
  let Docker: typeof import('dockerode');
  try {
    Docker = (await import('dockerode')).default;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return { ...base, skipped: 'dockerode is not installed' };
  }
  const docker = new Docker();
  if (
    !(await docker.ping().then(
      () => imagePresent(docker, image),
      () => false,
    ))
  ) {
    rmSync(dir, { recursive: true, force: true });
    return { ...base, skipped: `no Docker engine with ${image} (run scripts/test-services.sh)` };
  }
  const config = resolveSandbox({ socket: join(dir, 'sd.sock'), image }, dir, workspace);
  const daemon = createSandboxd({ docker, config, log: createLogger('silent', []) });
  await daemon.start();
  const tool = createShellTool({ sandbox: { config, client: sandboxClient(config.socket) } });
  const container = median(
    await timed(() => tool.execute({ command: 'true' }, { ...ctx, unattended: true })),
  );
  await daemon.stop();
  rmSync(dir, { recursive: true, force: true });
  return {
    ...base,
    image,
    containerMedianMs: Math.round(container * 10) / 10,
    overheadMs: Math.round((container - host) * 10) / 10,
  };
}
