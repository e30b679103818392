// A send whose answer the homeserver never gave back (it restarted, the connection reset after the
// event was stored) is tried again under the same transaction id: the room gets the event once and
// the caller its id. Found by `npm run faults` ("matrix: Synapse restarted mid-send"): a reply sent
// while Synapse restarted was reported undelivered and posted late by the sweeper, and one Synapse
// had stored before the reset would have been posted a second time. Against the real test Synapse,
// behind a proxy that drops the first answer to a send after Synapse took the request.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMatrixSdk } from '../adapters/matrix/load-sdk.ts';
import { matrixOps } from '../adapters/matrix/matrix-ops.ts';
import { transientWait } from '../adapters/matrix/rate-limit.ts';
import { createLogger } from '../src/log.ts';
import { botAccountToken } from './support/matrix-accounts.ts';
import { matrixHuman, messagesFrom } from './support/matrix-human.ts';
import { type MatrixEnv, matrixEnv } from './support/services.ts';

const env = matrixEnv();

describe('transientWait', () => {
  it.each([
    [{ code: 'ECONNREFUSED' }, 1, 500],
    [{ code: 'ECONNRESET' }, 2, 1000],
    [{ statusCode: 502 }, 3, 2000],
    [{ statusCode: 503 }, 9, 8000],
    [{ statusCode: 500 }, 1, undefined],
    [{ statusCode: 503, errcode: 'M_UNKNOWN' }, 1, undefined],
    [{ code: 'ENOTFOUND' }, 1, undefined],
    [new Error('boom'), 1, undefined],
    [undefined, 1, undefined],
  ])('%j, try %i: %s', (error, attempt, wait) => {
    expect(transientWait(error, attempt)).toBe(wait);
  });
});

describe.skipIf(!env)('Matrix: a send whose answer was lost', () => {
  const base = env ?? ({} as MatrixEnv);
  let proxy: Server;
  let proxyUrl: string;
  let dropped = 0;

  beforeAll(async () => {
    // Forwards everything; the first PUT .../send/... is answered by Synapse, then cut off.
    proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const upstream = await fetch(`${base.homeserver}${req.url}`, {
        method: req.method ?? 'GET',
        headers: Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
        ) as Record<string, string>,
        ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
      });
      const body = Buffer.from(await upstream.arrayBuffer());
      if (req.method === 'PUT' && /\/send\//.test(req.url ?? '') && dropped === 0) {
        dropped++;
        req.socket.destroy();
        return;
      }
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? '' });
      res.end(body);
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((done) => proxy.close(done));
  });

  it('is tried again as the same event: one message in the room, its id returned', async () => {
    const token = await botAccountToken(base.homeserver, `send-retry-${randomUUID().slice(0, 8)}`, 'RETRY');
    const { sdk } = await loadMatrixSdk();
    const quiet = () => {};
    sdk.LogService.setLogger({ info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet });
    const client = new sdk.MatrixClient(proxyUrl, token);
    const bot = matrixHuman(base.homeserver, token);
    const room = await bot.createRoom();
    const ops = matrixOps(client, createLogger('silent', [token]), () => Promise.resolve());
    const body = `once only ${randomUUID()}`;

    const eventId = await ops.send(room, { msgtype: 'm.text', body });

    expect(dropped).toBe(1);
    const mine = messagesFrom(await bot.events(room), await bot.userId()).filter((m) => m.body === body);
    expect(mine.map((m) => m.eventId)).toEqual([eventId]);
  });
});
