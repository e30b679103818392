// Every row that carries text from outside (a model's reply, a tool call's arguments) is written
// through src/store/storable.ts: a NUL or a lone surrogate in it must not make PostgreSQL refuse the
// row, or a failed reply would be lost and a question never asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
