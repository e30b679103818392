// The one test double: an OpenAI-compatible HTTP server that answers from a script, so the real
// provider client runs over real sockets. It records every request for assertions.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openAiCompatible } from '../../src/gateway/openai-compatible.ts';

export type ScriptStep =
  /** A streamed reply: `chunks` are sent as separate SSE events (split anywhere you like). */
  | {
      chunks: string[];
      toolCalls?: Array<{ id?: string; name: string; argumentChunks: string[] }>;
      usage?: { prompt_tokens: number; completion_tokens: number };
      finish?: string;
      /** Stop after the chunks without finish_reason or [DONE], as a crashed server would. */
      cutOff?: boolean;
      /** After the chunks, send `{"error": error}` as an SSE event and end the response. */
      error?: unknown;
      /** After the chunks, keep the response open without finishing it until the client leaves. */
      hold?: boolean;
      /** Wait this long before sending the response headers. */
      headerDelayMs?: number;
    }
  | { status: number; body: unknown }
  /** Accept the request, then destroy the socket without answering. */
  | { drop: true }
  /**
   * A 200 event-stream response whose body is exactly `raw`, written piece by piece (the pieces are
   * separate writes, `pauseMs` apart), so SSE text can be split at chosen byte boundaries.
   */
  | {
      raw: Array<string | Uint8Array>;
      pauseMs?: number;
      /** Keep the response open after the last piece until the client leaves. */
      hold?: boolean;
      /** After the pieces, destroy the socket instead of ending the response cleanly. */
      destroy?: boolean;
      headerDelayMs?: number;
      /** Wait for `open` before writing piece `before`: the turn lasts until the test has seen it. */
      gate?: { before: number; open: Promise<unknown> };
    };

export interface ScriptedModel {
  baseUrl: string;
  requests: Array<Record<string, unknown>>;
  /** The headers of each recorded chat request, in the same order as `requests`. */
  headers: IncomingHttpHeaders[];
  models: string[];
  close(): Promise<void>;
}

export const reply = (text: string, usage = { prompt_tokens: 12, completion_tokens: 5 }): ScriptStep => ({
  chunks: text.match(/.{1,4}/gs) ?? [],
  usage,
});

/** One SSE event carrying `data` as JSON text, for building `raw` steps. */
export const sseEvent = (data: unknown): string => `data: ${JSON.stringify(data)}\n\n`;

/** A chat.completion.chunk object with one choice, for building `raw` steps. */
export const wireChunk = (delta: unknown, finish: string | null = null): Record<string, unknown> => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fixed script, or a function that answers each request from its body (for any number of turns). */
export async function startScriptedModel(
  script: ScriptStep[] | ((request: Record<string, unknown>) => ScriptStep | undefined),
  models = ['test-model'],
): Promise<ScriptedModel> {
  const requests: Array<Record<string, unknown>> = [];
  const headers: IncomingHttpHeaders[] = [];
  const steps = typeof script === 'function' ? [] : [...script];
  const server = createServer(async (req, res) => {
    if (req.method === 'GET' && req.url === '/v1/models') {
      json(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model' })) });
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      json(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
      return;
    }
    const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    requests.push(body);
    headers.push(req.headers);
    const step = typeof script === 'function' ? script(body) : steps.shift();
    if (!step) {
      json(res, 500, { error: { message: 'the scripted model has no more steps' } });
      return;
    }
    if ('drop' in step) {
      req.socket.destroy();
      return;
    }
    if ('status' in step) {
      json(res, step.status, step.body);
      return;
    }
    // A client that leaves early must not turn later writes into server errors.
    res.on('error', () => {});
    if (step.headerDelayMs) await sleep(step.headerDelayMs);
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if ('raw' in step) {
      for (const [i, piece] of step.raw.entries()) {
        if (step.gate?.before === i) await step.gate.open;
        if (res.destroyed) return;
        res.write(piece);
        if (step.pauseMs && i < step.raw.length - 1) await sleep(step.pauseMs);
      }
      if (step.destroy) {
        // Let the pieces reach the client before the connection goes.
        await sleep(step.pauseMs ?? 20);
        req.socket.destroy();
      } else if (!step.hold) res.end();
      return;
    }
    const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    const chunk = (delta: unknown, finish: string | null = null) =>
      send({
        id: 'c1',
        object: 'chat.completion.chunk',
        model: body.model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
    chunk({ role: 'assistant', content: '' });
    for (const text of step.chunks) chunk({ content: text });
    for (const [index, call] of (step.toolCalls ?? []).entries()) {
      const [first = '', ...more] = call.argumentChunks;
      chunk({
        tool_calls: [
          {
            index,
            id: call.id ?? `call_${index}`,
            type: 'function',
            function: { name: call.name, arguments: first },
          },
        ],
      });
      for (const part of more) chunk({ tool_calls: [{ index, function: { arguments: part } }] });
    }
    if (step.cutOff) {
      res.end();
      return;
    }
    if (step.error !== undefined) {
      res.end(`data: ${JSON.stringify({ error: step.error })}\n\n`);
      return;
    }
    if (step.hold) return;
    chunk({}, step.finish ?? (step.toolCalls?.length ? 'tool_calls' : 'stop'));
    if (step.usage) send({ id: 'c1', object: 'chat.completion.chunk', choices: [], usage: step.usage });
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    headers,
    models,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      data += c;
    });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

/** The default route, one entry: the real OpenAI-compatible client pointed at a scripted model. */
export const scriptedRoute = (baseUrl: string, model = 'test-model') => ({
  name: 'default',
  entries: [{ providerName: 'default', provider: openAiCompatible({ baseUrl }), model }],
});
