// The pieces the crash test and its child process share: an assistant whose one tool ('mark')
// appends a line to a file (so "ran at most once" is a line count), behind the test gate, on a
// model that asks for that tool on a fresh message and answers once it has a result.
import { appendFileSync } from 'node:fs';
import { createAssistant } from '../../src/core/assistant.ts';
import { createLogger } from '../../src/log.ts';
import type { Db, Queryable } from '../../src/store/db.ts';
import { sessionGrants } from '../../src/store/grants.ts';
import { createToolRegistry } from '../../src/tools/registry.ts';
import type { Tool } from '../../src/tools/types.ts';
import { conservativeGate } from './gates.ts';
import type { ScriptStep } from './scripted-model.ts';
import { scriptedRoute } from './scripted-model.ts';

export const CHANNEL = 'test';
export const ROOM = 'r';
export const OWNER = 'owner';

export function markTool(file: string): Tool {
  return {
    name: 'mark',
    description: 'Appends a line to the marker file.',
    trusted: true,
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    },
    async execute(args) {
      appendFileSync(file, `${String(args.text)}\n`);
      return 'marked';
    },
  };
}

/** Asks for `mark` when the last message is the owner's; answers when it is a tool result. */
export function markModel(body: Record<string, unknown>): ScriptStep {
  const messages = body.messages as Array<{ role: string }>;
  if (messages.at(-1)?.role === 'tool') return { chunks: ['done'] };
  return { chunks: [], toolCalls: [{ name: 'mark', argumentChunks: ['{"text":"ran"}'] }] };
}

export function rigAssistant(db: Db, opts: { modelUrl: string; marker: string; now?: () => Date }) {
  const now = opts.now ?? (() => new Date());
  return createAssistant({
    db,
    log: createLogger('silent', []),
    now,
    owners: { [CHANNEL]: OWNER },
    workspace: '/nonexistent',
    gate: conservativeGate(sessionGrants(db, now)),
    route: scriptedRoute(opts.modelUrl),
    tools: createToolRegistry([markTool(opts.marker)]),
    retry: { retries: 0 },
    limits: { permissionTtlMs: 60_000 },
  });
}

/** A Db that calls `after(n)` once its n-th statement has completed (transactions included). */
export function countingDb(db: Db, after: (n: number) => void): Db {
  let n = 0;
  const counted = (q: Queryable): Queryable => ({
    async query(sql, params) {
      const result = await q.query(sql, params);
      after(++n);
      return result as never;
    },
    async exec(sql) {
      await q.exec(sql);
      after(++n);
    },
  });
  const outer = counted(db);
  return {
    kind: db.kind,
    location: db.location,
    query: outer.query,
    exec: outer.exec,
    // BEGIN and COMMIT count as statements too: a kill right after BEGIN or before COMMIT is a case.
    async transaction(work) {
      after(++n);
      const result = await db.transaction((tx) => work(counted(tx)));
      after(++n);
      return result;
    },
    close: () => db.close(),
  };
}
