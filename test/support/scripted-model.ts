// The one test double: an OpenAI-compatible HTTP server that answers from a script, so the real
// provider client runs over real sockets. It records every request for assertions.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ScriptStep =
  /** A streamed reply: `chunks` are sent as separate SSE events (split anywhere you like). */
  | {
      chunks: string[];
      toolCalls?: Array<{ id?: string; name: string; argumentChunks: string[] }>;
      usage?: { prompt_tokens: number; completion_tokens: number };
      finish?: string;
      /** Stop after the chunks without finish_reason or [DONE], as a crashed server would. */
      cutOff?: boolean;
    }
  | { status: number; body: unknown }
  /** Accept the request, then destroy the socket without answering. */
  | { drop: true };

export interface ScriptedModel {
  baseUrl: string;
  requests: Array<Record<string, unknown>>;
  models: string[];
  close(): Promise<void>;
}

export const reply = (text: string, usage = { prompt_tokens: 12, completion_tokens: 5 }): ScriptStep => ({
  chunks: text.match(/.{1,4}/gs) ?? [],
  usage,
});

export async function startScriptedModel(
  script: ScriptStep[],
  models = ['test-model'],
): Promise<ScriptedModel> {
  const requests: Array<Record<string, unknown>> = [];
  const steps = [...script];
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
    const step = steps.shift();
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
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
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
    chunk({}, step.finish ?? (step.toolCalls?.length ? 'tool_calls' : 'stop'));
    if (step.usage) send({ id: 'c1', object: 'chat.completion.chunk', choices: [], usage: step.usage });
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
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
