// What the Bot API emulator (telegram-test-api) lacks for files, in front of it on a real socket:
// getFile and downloads at <root>/file/bot<token>/<path>, served from files the test registers;
// every other request is passed through to the emulator untouched. Plus owner messages carrying
// documents, photos, voice, audio and forward_origin, which the emulator's client cannot build.
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TelegramEmulator } from './telegram-emulator.ts';

interface StoredFile {
  id: string;
  path: string;
  bytes: Uint8Array;
}

export interface TelegramFileFront {
  /** The API root the bot must use (this front, not the emulator). */
  apiRoot: string;
  /** Registers a file; what a message's document/photo/voice field carries. */
  put(bytes: Uint8Array, name?: string): { file_id: string; file_unique_id: string; file_size: number };
  /** The owner (or anyone) sends a private message with these fields (document, photo, voice, forward_origin …). */
  send(userId: number, fields: Record<string, unknown>): Promise<void>;
  /** File paths downloaded so far, in order. */
  downloads: string[];
  /** getFile calls answered so far. */
  getFileCalls: string[];
  stop(): Promise<void>;
}

export async function startTelegramFileFront(emulator: TelegramEmulator): Promise<TelegramFileFront> {
  const files = new Map<string, StoredFile>();
  const downloads: string[] = [];
  const getFileCalls: string[] = [];
  const upstream = new URL(emulator.apiRoot);
  const prefix = `/bot${emulator.token}`;

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://front');
    if (url.pathname === `${prefix}/getFile`) return getFile(req, res, url);
    if (url.pathname.startsWith(`/file${prefix}/`)) {
      const path = decodeURIComponent(url.pathname.slice(`/file${prefix}/`.length));
      const file = [...files.values()].find((f) => f.path === path);
      downloads.push(path);
      if (!file) return json(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.bytes.length });
      res.end(file.bytes);
      return;
    }
    pass(req, res);
  });

  async function getFile(req: IncomingMessage, res: ServerResponse, url: URL) {
    const body = await readBody(req);
    const type = req.headers['content-type'] ?? '';
    const params = type.includes('json')
      ? (JSON.parse(body || '{}') as Record<string, unknown>)
      : Object.fromEntries(new URLSearchParams(body || url.search));
    const id = String(params.file_id ?? '');
    getFileCalls.push(id);
    const file = files.get(id);
    if (!file)
      return json(res, 400, { ok: false, error_code: 400, description: 'Bad Request: invalid file_id' });
    // The cloud Bot API refuses files over 20 MB here, before any download.
    if (file.bytes.length > 20 * 1024 * 1024)
      return json(res, 400, { ok: false, error_code: 400, description: 'Bad Request: file is too big' });
    json(res, 200, {
      ok: true,
      result: { file_id: id, file_unique_id: `u${id}`, file_size: file.bytes.length, file_path: file.path },
    });
  }

  function pass(req: IncomingMessage, res: ServerResponse) {
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let counter = 0;
  return {
    apiRoot: `http://127.0.0.1:${port}`,
    downloads,
    getFileCalls,
    put(bytes, name = 'file.bin') {
      const id = `F${++counter}${randomUUID().slice(0, 8)}`;
      files.set(id, { id, path: `documents/${counter}-${name.replace(/[^A-Za-z0-9._-]/g, '_')}`, bytes });
      return { file_id: id, file_unique_id: `u${id}`, file_size: bytes.length };
    },
    async send(userId, fields) {
      const client = emulator.server.getClient(emulator.token, {
        userId,
        chatId: userId,
        type: 'private',
        firstName: `u${userId}`,
      });
      const message = client.makeMessage('') as unknown as Record<string, unknown>;
      delete message.text;
      await emulator.server.addUserMessage({ ...message, ...fields } as never);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (p: Buffer) => parts.push(p));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
