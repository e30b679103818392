// Turns that use the sandbox: a digest (nobody watching) runs its shell in a container, a delete is
// still refused, and `steward chat` with sandbox.shell: container never opens the Docker socket.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAssistant } from '../src/core/assistant.ts';
import { openAiCompatible } from '../src/gateway/openai-compatible.ts';
import { createLogger } from '../src/log.ts';
import { permissionChain } from '../src/permissions/chain.ts';
import { sandboxClient } from '../src/sandbox/client.ts';
import { createSandboxd, type Sandboxd } from '../src/sandbox/daemon.ts';
import { resolveSandbox, type SandboxConfig } from '../src/sandbox/sandbox-config.ts';
import type { Db } from '../src/store/db.ts';
import { sessionGrants } from '../src/store/grants.ts';
import { migrate } from '../src/store/migrate.ts';
import { createShellTool } from '../src/tools/builtin/shell.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import { dockerEnv } from './support/docker.ts';
import { runSteward } from './support/run-steward.ts';
import { type ScriptedModel, type ScriptStep, startScriptedModel } from './support/scripted-model.ts';
import { embeddedBackend, tempDir } from './support/services.ts';

const docker = dockerEnv();

/** Calls `shell` with the command once, then answers with the text of what it got. */
const shellOnce =
  (command: string) =>
  (request: Record<string, unknown>): ScriptStep => {
    const messages = request.messages as Array<{ role: string; content: string }>;
    const results = messages.filter((m) => m.role === 'tool');
    if (results.length === 0)
      return { chunks: [], toolCalls: [{ name: 'shell', argumentChunks: [JSON.stringify({ command })] }] };
    return { chunks: ['done'] };
  };

describe.skipIf(!docker)('turns with the sandbox', () => {
  const dir = tempDir('steward-sbx-turns-');
  const workspace = join(dir.path, 'workspace');
  let config: SandboxConfig;
  let daemon: Sandboxd;
  let db: Db;
  let cleanup: () => Promise<void>;
  let model: ScriptedModel | undefined;

  beforeAll(async () => {
    mkdirSync(join(workspace, 'data'), { recursive: true });
    writeFileSync(join(workspace, 'data', 'keep.txt'), 'owner data\n');
    writeFileSync(
      join(workspace, 'report.py'),
      'import os, sys\nprint("report", os.getuid(), sys.version_info[0])\n',
    );
    config = {
      ...resolveSandbox(
        { socket: join(dir.path, 'run', 'sd.sock'), image: docker?.fullImage, shell: 'host' },
        dir.path,
        workspace,
      ),
    };
    daemon = createSandboxd({ docker: new Docker(), config, log: createLogger('silent', []) });
    await daemon.start();
    ({ db, cleanup } = await embeddedBackend.open());
    await migrate(db);
  }, 60_000);
  afterAll(async () => {
    await model?.close();
    await daemon?.stop();
    await cleanup?.();
    dir.remove();
  });

  const digest = async (command: string) => {
    await model?.close();
    model = await startScriptedModel(shellOnce(command));
    const grants = sessionGrants(db, () => new Date());
    const assistant = createAssistant({
      db,
      log: createLogger('silent', []),
      owners: { test: 'owner' },
      workspace,
      grants,
      gate: permissionChain({ workspace, grants, sandboxNetwork: config.network }),
      sandbox: config,
      route: {
        name: 'default',
        entries: [
          { providerName: 'default', provider: openAiCompatible({ baseUrl: model.baseUrl }), model: 'm' },
        ],
      },
      tools: createToolRegistry([
        createShellTool({ sandbox: { config, client: sandboxClient(config.socket) } }),
      ]),
      retry: { retries: 0 },
    });
    const status = await assistant.runUnattended(
      { channel: 'test', room: 'digest', text: 'weekly report' },
      () => {},
    );
    expect(status).toBe('answered');
    return JSON.stringify(model.requests);
  };

  it('a digest whose model runs rm -rf on its workspace is refused as before', async () => {
    const sent = await digest('rm -rf data');
    expect(sent).toMatch(/Not run: nobody is there to approve shell/);
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(workspace, 'data', 'keep.txt'), 'utf8')).toBe('owner data\n');
  }, 60_000);

  it('a digest that runs python3 report.py runs it in a container', async () => {
    const sent = await digest('python3 report.py');
    expect(sent).toMatch(/report 65534 3/);
    expect(sent).toMatch(/ran in a sandbox container: image steward-sandbox:latest, network none/);
  }, 60_000);

  it('steward chat with sandbox.shell: container never opens the Docker socket', async () => {
    let dockerHits = 0;
    const trap = createServer((s) => {
      dockerHits++;
      s.destroy();
    });
    const trapPath = join(dir.path, 'trap-docker.sock');
    await new Promise<void>((d) => trap.listen(trapPath, d));
    await model?.close();
    model = await startScriptedModel(shellOnce('id -u'));
    const result = await runSteward(['chat'], {
      env: {
        STEWARD_DATA_DIR: join(dir.path, 'chat-data'),
        STEWARD_WORKSPACE: workspace,
        STEWARD_MODEL_BASE_URL: model.baseUrl,
        STEWARD_MODEL: 'm',
        STEWARD_SANDBOX_SOCKET: config.socket,
        STEWARD_SANDBOX_SHELL: 'container',
        DOCKER_HOST: `unix://${trapPath}`,
      },
      input: 'who runs commands?\n',
    });
    trap.close();
    expect(result.code).toBe(0);
    const sent = JSON.stringify(model.requests);
    expect(sent).toMatch(/65534/);
    expect(sent).toMatch(/ran in a sandbox container/);
    expect(dockerHits).toBe(0);
  }, 180_000); // the full image on vfs storage: each container copies its 260 MB root

  it('no source outside sandboxd loads dockerode', async () => {
    const { execFileSync } = await import('node:child_process');
    const hits = execFileSync(
      'grep',
      ['-rlE', "from 'dockerode'|import\\('dockerode'\\)", 'src', 'cli', 'adapters'],
      {
        cwd: join(import.meta.dirname, '..'),
      },
    )
      .toString()
      .trim()
      .split('\n')
      .sort();
    expect(hits).toEqual([
      'cli/commands/sandboxd.ts',
      'src/sandbox/container-spec.ts',
      'src/sandbox/daemon.ts',
    ]);
    // The two src files import only its types, which vanish when types are stripped.
    const { readFileSync } = await import('node:fs');
    for (const file of ['src/sandbox/container-spec.ts', 'src/sandbox/daemon.ts']) {
      const text = readFileSync(join(import.meta.dirname, '..', file), 'utf8');
      expect(text).toMatch(/import type (\{[^}]*\}|Docker) from 'dockerode'/);
    }
  });
});
