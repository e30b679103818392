// An Anthropic-compatible HTTP server that answers POST /v1/messages from a script, so the real
// provider client runs over real sockets. It records every request body and its headers.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One content block of a streamed reply, sent as start, deltas (one per piece) and stop. */
export type ScriptBlock =
  | { text: string[] }
  /** `inputChunks` are the input_json_delta fragments, split anywhere. */
  | { toolUse: { id?: string; name: string; inputChunks: string[] } }
  | { thinking: string[]; signature?: string };

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

export type AnthropicStep =
  /** A streamed reply: message_start, the blocks in order, message_delta, message_stop. */
  | {
      blocks: ScriptBlock[];
      /** input_tokens goes in message_start, output_tokens in message_delta; absent: no usage at all. */
      usage?: AnthropicUsage;
      /** Default: tool_use when a tool_use block was sent, else end_turn. */
      stopReason?: string;
      /** Send a ping event after message_start, as the real API does. */
      ping?: boolean;
      /** Stop after the blocks without message_delta or message_stop, as a crashed server would. */
      cutOff?: boolean;
      /** After the blocks, send an SSE `error` event carrying this error and end the response. */
      error?: { type: string; message: string };
      /** After the blocks, keep the response open without finishing it until the client leaves. */
      hold?: boolean;
      /** Wait this long before sending the response headers. */
      headerDelayMs?: number;
    }
  /** A non-200 answer with this JSON body, e.g. anthropicError('overloaded_error', 'Overloaded'). */
  | { status: number; body: unknown }
  /** Accept the request, then destroy the socket without answering. */
  | { drop: true }
  /**
   * A 200 event-stream response whose body is exactly `raw`, written piece by piece (separate writes,
   * `pauseMs` apart).
   */
  | {
      raw: Array<string | Uint8Array>;
      pauseMs?: number;
      hold?: boolean;
      /** After the pieces, destroy the socket instead of ending the response cleanly. */
      destroy?: boolean;
      headerDelayMs?: number;
    };

export interface ScriptedAnthropic {
  /** The API root, without /v1: what the provider's baseUrl takes. */
  baseUrl: string;
  requests: Array<Record<string, unknown>>;
  /** The headers of each recorded request, in the same order as `requests`. */
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** A text reply streamed in 4-character deltas. */
export const textReply = (text: string, usage: AnthropicUsage = { input_tokens: 12, output_tokens: 5 }) =>
  ({ blocks: [{ text: text.match(/.{1,4}/gs) ?? [] }], usage }) satisfies AnthropicStep;

/** The error body the API sends with a non-200 status. */
export const anthropicError = (type: string, message: string) => ({
  type: 'error',
  error: { type, message },
});

/** One SSE event as the API writes it: an `event:` line naming the type, then the JSON data. */
export const sseEvent = (data: { type: string } & Record<string, unknown>): string =>
  `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

/** The events of a whole message, for building `raw` steps. */
export function messageEvents(step: {
  blocks: ScriptBlock[];
  usage?: AnthropicUsage;
  stopReason?: string;
  ping?: boolean;
}): { opening: string[]; blocks: string[][]; closing: string[] } {
  // Without scripted usage the events carry none, to show the client copes.
  const { output_tokens, ...input } = step.usage ?? {};
  const opening = [
    sseEvent({
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        ...(step.usage ? { usage: { ...input, output_tokens: 1 } } : {}),
      },
    }),
    ...(step.ping ? [sseEvent({ type: 'ping' })] : []),
  ];
  const blocks = step.blocks.map((block, index) => blockEvents(block, index));
  const usesTools = step.blocks.some((b) => 'toolUse' in b);
  const closing = [
    sseEvent({
      type: 'message_delta',
      delta: { stop_reason: step.stopReason ?? (usesTools ? 'tool_use' : 'end_turn'), stop_sequence: null },
      ...(step.usage ? { usage: { output_tokens } } : {}),
    }),
    sseEvent({ type: 'message_stop' }),
  ];
  return { opening, blocks, closing };
}

function blockEvents(block: ScriptBlock, index: number): string[] {
  const start = (content_block: unknown) => sseEvent({ type: 'content_block_start', index, content_block });
  const delta = (d: unknown) => sseEvent({ type: 'content_block_delta', index, delta: d });
  const stop = sseEvent({ type: 'content_block_stop', index });
  if ('text' in block) {
    return [
      start({ type: 'text', text: '' }),
      ...block.text.map((text) => delta({ type: 'text_delta', text })),
      stop,
    ];
  }
  if ('toolUse' in block) {
    const { id = `toolu_${index}`, name, inputChunks } = block.toolUse;
    return [
      start({ type: 'tool_use', id, name, input: {} }),
      ...inputChunks.map((partial_json) => delta({ type: 'input_json_delta', partial_json })),
      stop,
    ];
  }
  return [
    start({ type: 'thinking', thinking: '' }),
    ...block.thinking.map((thinking) => delta({ type: 'thinking_delta', thinking })),
    delta({ type: 'signature_delta', signature: block.signature ?? 'sig-test' }),
    stop,
  ];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startScriptedAnthropic(script: AnthropicStep[]): Promise<ScriptedAnthropic> {
  const requests: Array<Record<string, unknown>> = [];
  const headers: IncomingHttpHeaders[] = [];
  const steps = [...script];
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/messages') {
      json(res, 404, anthropicError('not_found_error', `no route ${req.method} ${req.url}`));
      return;
    }
    const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    requests.push(body);
    headers.push(req.headers);
    const step = steps.shift();
    if (!step) {
      json(res, 500, anthropicError('api_error', 'the scripted model has no more steps'));
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
    const { opening, blocks, closing } = messageEvents(step);
    for (const event of [...opening, ...blocks.flat()]) res.write(event);
    if (step.cutOff) {
      res.end();
      return;
    }
    if (step.error) {
      res.end(sseEvent({ type: 'error', error: step.error }));
      return;
    }
    if (step.hold) return;
    res.end(closing.join(''));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    headers,
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
