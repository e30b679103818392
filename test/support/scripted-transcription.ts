// The speech-to-text double: an OpenAI-compatible `POST /v1/audio/transcriptions` server on a real
// socket. It parses the multipart body itself (so a malformed request from steward fails here),
// records each request and answers from a script.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TranscriptionRequest {
  headers: IncomingHttpHeaders;
  fields: Record<string, string>;
  file?: { name: string; type: string; bytes: Buffer };
}

export type TranscriptionAnswer = { text: string } | { status: number; body: unknown };

export interface ScriptedTranscription {
  baseUrl: string;
  requests: TranscriptionRequest[];
  close(): Promise<void>;
}

export interface MultipartPart {
  name: string;
  filename?: string;
  type?: string;
  body: Buffer;
}

/** Splits a multipart/form-data body into its parts; throws on anything malformed. */
export function parseMultipart(body: Buffer, contentType: string): MultipartPart[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!boundary) throw new Error(`not multipart: ${contentType}`);
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: MultipartPart[] = [];
  let at = body.indexOf(delimiter);
  if (at !== 0) throw new Error('the body does not start with the boundary');
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString() === '--') return parts;
    if (body.subarray(at, at + 2).toString() !== '\r\n') throw new Error('no CRLF after a boundary');
    const headEnd = body.indexOf('\r\n\r\n', at);
    if (headEnd < 0) throw new Error('a part without a blank line after its headers');
    const head = body.subarray(at + 2, headEnd).toString('utf8');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headEnd + 4);
    if (next < 0) throw new Error('a part without a closing boundary');
    const disposition = /content-disposition:\s*form-data;([^\r\n]*)/i.exec(head)?.[1] ?? '';
    const name = /\bname="([^"]*)"/.exec(disposition)?.[1];
    if (name === undefined) throw new Error('a part without a name');
    const filename = /\bfilename="([^"]*)"/.exec(disposition)?.[1];
    const type = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1]?.trim();
    parts.push({
      name,
      ...(filename !== undefined ? { filename } : {}),
      ...(type ? { type } : {}),
      body: body.subarray(headEnd + 4, next),
    });
    at = next + 2;
  }
}

export async function startScriptedTranscription(
  answer: (request: TranscriptionRequest) => TranscriptionAnswer,
): Promise<ScriptedTranscription> {
  const requests: TranscriptionRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions')
        return send(404, { error: { message: `no route ${req.method} ${req.url}` } });
      let parts: MultipartPart[];
      try {
        parts = parseMultipart(Buffer.concat(chunks), req.headers['content-type'] ?? '');
      } catch (error) {
        return send(400, { error: { message: (error as Error).message } });
      }
      const fields: Record<string, string> = {};
      let file: TranscriptionRequest['file'];
      for (const p of parts) {
        if (p.filename !== undefined) file = { name: p.filename, type: p.type ?? '', bytes: p.body };
        else fields[p.name] = p.body.toString('utf8');
      }
      const request: TranscriptionRequest = { headers: req.headers, fields, ...(file ? { file } : {}) };
      requests.push(request);
      if (!file || !fields.model) return send(400, { error: { message: 'file and model are required' } });
      const scripted = answer(request);
      if ('text' in scripted) send(200, { text: scripted.text });
      else send(scripted.status, scripted.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
