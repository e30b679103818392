// The core with a real store and two scripted models (a cloud route and a local sensitive one),
// shared by the suites that drive attachments through the port without a platform.
import { afterAll, beforeAll } from 'vitest';
import { type AssistantDeps, createAssistant } from '../../src/core/assistant.ts';
import { createLogger } from '../../src/log.ts';
import type { Db } from '../../src/store/db.ts';
import { sessionGrants } from '../../src/store/grants.ts';
import { migrate } from '../../src/store/migrate.ts';
import { createToolRegistry } from '../../src/tools/registry.ts';
import { conservativeGate } from './gates.ts';
import { reply, type ScriptedModel, scriptedRoute, startScriptedModel } from './scripted-model.ts';
import { embeddedBackend } from './services.ts';

export interface AttachmentCore {
  db: Db;
  cloud: ScriptedModel;
  local: ScriptedModel;
  assistant(extra?: Partial<AssistantDeps>): ReturnType<typeof createAssistant>;
}

/** Registers the suite's hooks; the fields are filled once `beforeAll` has run. */
export function useAttachmentCore(): AttachmentCore {
  let cleanup: () => Promise<void> = async () => {};
  const rig = {
    assistant: (extra: Partial<AssistantDeps> = {}) =>
      createAssistant({
        db: rig.db,
        gate: conservativeGate(sessionGrants(rig.db, () => new Date())),
        log: createLogger('silent', []),
        owners: { test: 'owner' },
        route: scriptedRoute(rig.cloud.baseUrl),
        tools: createToolRegistry([]),
        workspace: '/nonexistent',
        retry: { retries: 0 },
        ...extra,
      }),
  } as AttachmentCore;
  beforeAll(async () => {
    ({ db: rig.db, cleanup } = await embeddedBackend.open());
    await migrate(rig.db);
    rig.cloud = await startScriptedModel(() => reply('from the cloud'));
    rig.local = await startScriptedModel(() => reply('from the local model'));
  });
  afterAll(async () => {
    await rig.cloud?.close();
    await rig.local?.close();
    await cleanup();
  });
  return rig;
}
