// steward on Matrix for the end-to-end tests: the real channel against the test Synapse, the real
// assistant, permission chain, shell tool and store, and the scripted model server.

import { join } from 'node:path';
import { type MatrixChannel, matrixChannel } from '../../adapters/matrix/matrix-channel.ts';
import { packageVersion } from '../../cli/version.ts';
import { type AssistantDeps, createAssistant } from '../../src/core/assistant.ts';
import { openAiCompatible } from '../../src/gateway/openai-compatible.ts';
import { createLogger } from '../../src/log.ts';
import { outputStore } from '../../src/offload/output-store.ts';
import { permissionChain } from '../../src/permissions/chain.ts';
import type { Db } from '../../src/store/db.ts';
import { sessionGrants } from '../../src/store/grants.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openPglite } from '../../src/store/open-db.ts';
import { createRetrieveOutputTool } from '../../src/tools/builtin/retrieve-output.ts';
import { shellTool } from '../../src/tools/builtin/shell.ts';
import { createToolRegistry } from '../../src/tools/registry.ts';
import { runChannel } from './run-channel.ts';
import type { ScriptedModel } from './scripted-model.ts';
import type { MatrixEnv } from './services.ts';

export interface RunningSteward {
  channel: MatrixChannel;
  db: Db;
  directRoom: string;
  botId: string;
  /** The bot's device and key, when encryption is on. */
  device?: { id: string; ed25519: string };
  /** Stops the channel and waits for `run` to return; the database stays open. */
  stop(): Promise<void>;
}

/** Opens (or reopens) the embedded database in `dir`, with migrations applied. */
export async function openStewardDb(dir: string): Promise<Db> {
  const db = await openPglite(join(dir, 'pg'));
  await migrate(db);
  return db;
}

export async function startSteward(
  env: MatrixEnv,
  model: ScriptedModel,
  db: Db,
  workspace: string,
  /** End-to-end encryption: off unless asked for, as the shared test bot's one device cannot start
   * anew with fresh keys in every test's fresh database. */
  options: { encryption?: boolean; assistant?: Partial<AssistantDeps>; editIntervalMs?: number } = {},
): Promise<RunningSteward> {
  const log = createLogger(process.env.STEWARD_TEST_LOG ?? 'silent', [env.botToken]);
  const now = () => new Date();
  const grants = sessionGrants(db, now);
  const outputs = outputStore(db, now);
  const assistant = createAssistant({
    db,
    log,
    owners: { matrix: env.owner },
    workspace,
    grants,
    gate: permissionChain({ workspace, grants }),
    outputs,
    route: {
      name: 'default',
      entries: [
        {
          providerName: 'default',
          provider: openAiCompatible({ baseUrl: model.baseUrl }),
          model: 'test-model',
        },
      ],
    },
    tools: createToolRegistry([shellTool, createRetrieveOutputTool(outputs)]),
    retry: { retries: 0 },
    version: packageVersion(),
    ...options.assistant,
  });
  const channel = matrixChannel({
    homeserver: env.homeserver,
    accessToken: env.botToken,
    owner: env.owner,
    db,
    log,
    editIntervalMs: options.editIntervalMs ?? 150,
    typingEveryMs: 1000,
    pollMs: 1000,
    encryption: options.encryption ?? false,
  });
  const stopper = new AbortController();
  const running = runChannel(channel, assistant, stopper.signal);
  running.catch(() => {});
  const ready = await Promise.race([
    channel.ready(),
    running.then(() => Promise.reject(new Error('run ended'))),
  ]);
  return {
    channel,
    db,
    directRoom: ready.directRoom,
    botId: ready.userId,
    ...(ready.device ? { device: ready.device } : {}),
    async stop() {
      stopper.abort();
      await running;
    },
  };
}
