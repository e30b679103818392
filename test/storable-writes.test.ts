// Every row that carries text from outside (a model's reply, a tool call's arguments, a provider's
// call id or error) is stored whatever it holds: the drivers make every text parameter storable and
// jsonb values go through storableJson (src/store/storable.ts). A refused row would lose a failed
// reply, a question, a call's audit row or a digest's failure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestStore } from '../src/scheduler/store.ts';
import { recordAudit } from '../src/store/audit-log.ts';
import type { Db } from '../src/store/db.ts';
import { recordDelivery, undeliveredReplies } from '../src/store/delivery-ledger.ts';
import { migrate } from '../src/store/migrate.ts';
import { permissionRequests } from '../src/store/permission-requests.ts';
import { sessionLog } from '../src/store/session-log.ts';
import { embeddedBackend } from './support/services.ts';

const HOSTILE = [
  ['a NUL', 'a\u0000b'],
  ['a lone high surrogate', 'a\ud800b'],
  ['a lone low surrogate', 'a\udc00b'],
] as const;

describe('rows with text from outside are stored whatever it holds', () => {
  let db: Db;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ db, cleanup } = await embeddedBackend.open());
    await migrate(db);
  });
  afterAll(async () => {
    await cleanup();
  });

  it.each(HOSTILE)('a failed reply holding %s is kept for a late post', async (_, text) => {
    const room = `r-${text.codePointAt(1)}`;
    await recordDelivery(db, {
      kind: 'reply',
      channel: 'test',
      room,
      delivered: false,
      messageIds: [],
      error: `refused: ${text}`,
      body: `answer ${text}`,
    });
    const kept = (await undeliveredReplies(db, 'test', 5, 100)).filter((r) => r.room === room);
    expect(kept).toHaveLength(1);
    expect(kept[0]?.body).toMatch(/^answer a.b$/);
    expect(kept[0]?.body).not.toContain('\u0000');
  });

  it.each(HOSTILE)('a question whose arguments hold %s is stored', async (_, text) => {
    const session = await sessionLog(db).open('test', `q-${text.codePointAt(1)}`);
    const request = await permissionRequests(db).create(db, {
      sessionId: session.id,
      turnId: session.id,
      callId: 'c1',
      tool: 'shell',
      args: { command: `echo ${text}` },
      canonical: `echo ${text}`,
      score: 2,
      layer: 'classifier',
      rationale: `writes ${text}`,
      grant: null,
      expiresAt: new Date(Date.now() + 60_000),
    });
    const found = await permissionRequests(db).find(request.id);
    expect(found?.canonical).toMatch(/^echo a.b$/);
    expect(JSON.stringify(found?.args)).not.toContain('\\u0000');
  });

  it.each(HOSTILE)('a call whose tool name and id hold %s gets its audit row', async (_, text) => {
    await recordAudit(db, {
      sessionId: null,
      turnId: null,
      callId: `call ${text}`,
      tool: `shell${text}`,
      args: text,
      layer: 'policy',
      verdict: 'deny',
      score: 3,
      decision: null,
      outcome: 'not_run',
      durationMs: 0,
    });
    const rows = await db.query<{ tool: string }>('select tool from audit_log where call_id like $1', [
      `call a%b`,
    ]);
    expect(rows.rows.map((r) => r.tool)).toContain(`shell${text.replace('\u0000', '\uFFFD')}`.toWellFormed());
  });

  it.each(HOSTILE)('a question whose call id holds %s is stored', async (_, text) => {
    const session = await sessionLog(db).open('test', `c-${text.codePointAt(1)}`);
    const request = await permissionRequests(db).create(db, {
      sessionId: session.id,
      turnId: session.id,
      callId: `c${text}`,
      tool: 'shell',
      args: { command: 'rm x' },
      canonical: 'rm x',
      score: 2,
      layer: 'classifier',
      rationale: 'removes x',
      grant: null,
      expiresAt: new Date(Date.now() + 60_000),
    });
    expect((await permissionRequests(db).find(request.id))?.callId).not.toContain('\u0000');
  });

  it.each(HOSTILE)("a digest's failure holding %s is recorded, with its message ids", async (_, text) => {
    const store = digestStore(db);
    const id = `d-${text.codePointAt(1)}`;
    await store.insert({
      id,
      cron: '0 7 * * *',
      timezone: 'UTC',
      channel: 'test',
      room: 'r',
      prompt: `summarize ${text}`,
      skill: null,
      source: 'chat',
      nextFireAt: new Date(),
    });
    const runId = await store.startManualRun(id, new Date());
    await store.finishRun(runId, {
      outcome: 'failed',
      sessionId: null,
      posted: 0,
      messageIds: [`m${text}`],
      detail: `model: ${text}`,
      at: new Date(),
    });
    const row = await db.query<{ outcome: string; detail: string }>(
      'select outcome, detail from digest_runs where id = $1',
      [runId],
    );
    expect(row.rows[0]?.outcome).toBe('failed');
    expect(row.rows[0]?.detail).toMatch(/^model: a.b$/);
  });
});
