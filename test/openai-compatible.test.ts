import { createServer } from 'node:net';
import { Agent, type Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openAiCompatible } from '../src/gateway/openai-compatible.ts';
import type { ModelRequest, ProviderEvent } from '../src/gateway/types.ts';
import { drain, expectOneTerminal } from './support/provider-stream.ts';
import {
  reply,
  type ScriptedModel,
  type ScriptStep,
  sseEvent,
  startScriptedModel,
  wireChunk,
} from './support/scripted-model.ts';

type ErrorEvent = Extract<ProviderEvent, { type: 'error' }>;

const servers: ScriptedModel[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(steps: ScriptStep[]): Promise<ScriptedModel> {
  const server = await startScriptedModel(steps);
  servers.push(server);
  return server;
}

const ask = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'test-model',
  messages: [{ role: 'user', content: 'hello' }],
  ...overrides,
});

async function run(steps: ScriptStep[], overrides: Partial<ModelRequest> = {}, apiKey?: string) {
  const server = await serve(steps);
  const provider = openAiCompatible({ baseUrl: server.baseUrl, ...(apiKey ? { apiKey } : {}) });
  const events = await drain(provider.stream(ask(overrides)));
  return { server, events };
}

function lastError(events: ProviderEvent[]): ErrorEvent {
  const last = events.at(-1);
  expect(last?.type).toBe('error');
  return last as ErrorEvent;
}

const texts = (events: ProviderEvent[]) => events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []));

/** A port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('openAiCompatible: streamed replies', () => {
  it('names itself for logs', () => {
    expect(openAiCompatible({ baseUrl: 'http://127.0.0.1:1/v1' }).kind).toBe('openai-compatible');
  });

  it('streams text as ordered text_delta events, then usage, then done stop', async () => {
    const text = 'The quick brown fox jumps over the lazy dog. ¿Qué tal? 😀 — fin.';
    const { events } = await run([reply(text, { prompt_tokens: 31, completion_tokens: 17 })]);
    const deltas = texts(events);
    expect(deltas).toEqual(text.match(/.{1,4}/gs));
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join('')).toBe(text);
    expect(events.filter((e) => e.type === 'usage')).toEqual([
      { type: 'usage', inputTokens: 31, outputTokens: 17 },
    ]);
    expect(events.slice(-2)).toEqual([
      { type: 'usage', inputTokens: 31, outputTokens: 17 },
      { type: 'done', stopReason: 'stop' },
    ]);
    // The opening role chunk has empty content and yields no event.
    expect(events.every((e) => e.type !== 'text_delta' || e.text !== '')).toBe(true);
  });

  it('gives exactly the server chunks, in order', async () => {
    const chunks = ['Hel', 'lo', ', ', 'wor', 'ld', '!'];
    const { events } = await run([{ chunks, usage: { prompt_tokens: 1, completion_tokens: 2 } }]);
    expect(events).toEqual([
      ...chunks.map((text) => ({ type: 'text_delta', text })),
      { type: 'usage', inputTokens: 1, outputTokens: 2 },
      { type: 'done', stopReason: 'stop' },
    ]);
  });

  it('ends with done even when the server reports no usage', async () => {
    const { events } = await run([{ chunks: ['ok'] }]);
    expect(events).toEqual([
      { type: 'text_delta', text: 'ok' },
      { type: 'done', stopReason: 'stop' },
    ]);
  });

  it('maps finish_reason length and unknown reasons', async () => {
    const { events: cut } = await run([{ chunks: ['abc'], finish: 'length' }]);
    expect(cut.at(-1)).toEqual({ type: 'done', stopReason: 'length' });
    const { events: filtered } = await run([{ chunks: ['abc'], finish: 'content_filter' }]);
    expect(filtered.at(-1)).toEqual({ type: 'done', stopReason: 'other' });
  });

  it('reassembles SSE and multi-byte UTF-8 split at arbitrary byte boundaries on the wire', async () => {
    const text = 'naïve café ☕ 😀 日本語';
    const body = Buffer.from(
      sseEvent(wireChunk({ role: 'assistant', content: '' })) +
        sseEvent(wireChunk({ content: text.slice(0, 9) })) +
        sseEvent(wireChunk({ content: text.slice(9) })) +
        sseEvent(wireChunk({}, 'stop')) +
        sseEvent({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }) +
        'data: [DONE]\n\n',
    );
    // Cut into 1..7-byte pieces: through `data:`, through JSON, through every multi-byte character.
    const pieces: Uint8Array[] = [];
    for (let i = 0, size = 1; i < body.length; i += size, size = (size % 7) + 1) {
      pieces.push(body.subarray(i, i + size));
    }
    const { events } = await run([{ raw: pieces, pauseMs: 1 }]);
    expect(texts(events).join('')).toBe(text);
    expect(events.slice(-2)).toEqual([
      { type: 'usage', inputTokens: 3, outputTokens: 4 },
      { type: 'done', stopReason: 'stop' },
    ]);
  });

  it('accepts CRLF line endings, comments and event fields from the server', async () => {
    const raw = [
      ': ping\r\n\r\n',
      `event: message\r\nid: 1\r\ndata: ${JSON.stringify(wireChunk({ content: 'a' }))}\r\n\r`,
      `\ndata: ${JSON.stringify(wireChunk({ content: 'b' }, 'stop'))}\r\n\r\n`,
      'data: [DONE]\r\n\r\n',
    ];
    const { events } = await run([{ raw, pauseMs: 5 }]);
    expect(events).toEqual([
      { type: 'text_delta', text: 'a' },
      { type: 'text_delta', text: 'b' },
      { type: 'done', stopReason: 'stop' },
    ]);
  });

  it('finishes at [DONE] even if the server leaves the connection open', async () => {
    const raw = [sseEvent(wireChunk({ content: 'hi' })), sseEvent(wireChunk({}, 'stop')), 'data: [DONE]\n\n'];
    const { events } = await run([{ raw, hold: true }]);
    expect(events).toEqual([
      { type: 'text_delta', text: 'hi' },
      { type: 'done', stopReason: 'stop' },
    ]);
  }, 5_000);

  it('ends with done when finish_reason arrives but the stream closes without [DONE]', async () => {
    const raw = [sseEvent(wireChunk({ content: 'hi' })), sseEvent(wireChunk({}, 'stop'))];
    const { events } = await run([{ raw }]);
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'stop' });
  });
});

describe('openAiCompatible: tool calls', () => {
  it('assembles arguments split across many chunks into one tool_call with the exact JSON text', async () => {
    const args = '{"city": "Zürich", "units":"metric","days":[1,2,3],"note":"a \\"quoted\\" word"}';
    const argumentChunks = args.match(/.{1,3}/gs) ?? [];
    expect(argumentChunks.length).toBeGreaterThan(10);
    const { events } = await run([
      {
        chunks: [],
        toolCalls: [{ id: 'call_abc', name: 'get_weather', argumentChunks }],
        usage: { prompt_tokens: 50, completion_tokens: 20 },
      },
    ]);
    const calls = events.filter((e) => e.type === 'tool_call');
    expect(calls).toEqual([
      { type: 'tool_call', call: { id: 'call_abc', name: 'get_weather', arguments: args } },
    ]);
    expect(JSON.parse((calls[0] as { call: { arguments: string } }).call.arguments)).toEqual(
      JSON.parse(args),
    );
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'tool_calls' });
    expect(events).toContainEqual({ type: 'usage', inputTokens: 50, outputTokens: 20 });
  });

  it('gives text before the tool call and the call after', async () => {
    const { events } = await run([
      { chunks: ['Let me ', 'check.'], toolCalls: [{ id: 'c1', name: 'look', argumentChunks: ['{}'] }] },
    ]);
    expect(events).toEqual([
      { type: 'text_delta', text: 'Let me ' },
      { type: 'text_delta', text: 'check.' },
      { type: 'tool_call', call: { id: 'c1', name: 'look', arguments: '{}' } },
      { type: 'done', stopReason: 'tool_calls' },
    ]);
  });

  it('gives two parallel calls in index order with their ids', async () => {
    const { events } = await run([
      {
        chunks: [],
        toolCalls: [
          { id: 'call_first', name: 'search', argumentChunks: ['{"q":', '"cats"', '}'] },
          { id: 'call_second', name: 'fetch', argumentChunks: ['{"url":"https://', 'example.com/"}'] },
        ],
      },
    ]);
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'call_first', name: 'search', arguments: '{"q":"cats"}' } },
      {
        type: 'tool_call',
        call: { id: 'call_second', name: 'fetch', arguments: '{"url":"https://example.com/"}' },
      },
      { type: 'done', stopReason: 'tool_calls' },
    ]);
  });

  it('sorts interleaved deltas by index, whatever order they arrive in', async () => {
    const call = (index: number, fields: Record<string, unknown>) =>
      sseEvent(wireChunk({ tool_calls: [{ index, ...fields }] }));
    const raw = [
      call(1, { id: 'id_b', type: 'function', function: { name: 'beta', arguments: '{"b"' } }),
      call(0, { id: 'id_a', type: 'function', function: { name: 'alpha', arguments: '' } }),
      call(1, { function: { arguments: ':2}' } }),
      call(0, { function: { arguments: '{"a":1}' } }),
      sseEvent(wireChunk({}, 'tool_calls')),
      'data: [DONE]\n\n',
    ];
    const { events } = await run([{ raw }]);
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'id_a', name: 'alpha', arguments: '{"a":1}' } },
      { type: 'tool_call', call: { id: 'id_b', name: 'beta', arguments: '{"b":2}' } },
      { type: 'done', stopReason: 'tool_calls' },
    ]);
  });

  it('keeps calls apart when a server sends them without an index', async () => {
    // Some servers (older Ollama, some proxies) send whole calls with ids but no `index`.
    const raw = [
      sseEvent(
        wireChunk({
          tool_calls: [
            { id: 'x1', type: 'function', function: { name: 'one', arguments: '{"n":1}' } },
            { id: 'x2', type: 'function', function: { name: 'two', arguments: '{"n":2}' } },
          ],
        }),
      ),
      sseEvent(wireChunk({}, 'tool_calls')),
      'data: [DONE]\n\n',
    ];
    const { events } = await run([{ raw }]);
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'x1', name: 'one', arguments: '{"n":1}' } },
      { type: 'tool_call', call: { id: 'x2', name: 'two', arguments: '{"n":2}' } },
      { type: 'done', stopReason: 'tool_calls' },
    ]);
  });

  it('continues an index-less call with the deltas that follow it', async () => {
    const part = (fields: Record<string, unknown>) => sseEvent(wireChunk({ tool_calls: [fields] }));
    const raw = [
      part({ id: 'y1', type: 'function', function: { name: 'first', arguments: '{"a"' } }),
      part({ function: { arguments: ':1}' } }),
      part({ id: 'y2', type: 'function', function: { name: 'second', arguments: '' } }),
      part({ function: { arguments: '{"b":' } }),
      part({ id: 'y2', function: { arguments: '2}' } }),
      sseEvent(wireChunk({}, 'tool_calls')),
      'data: [DONE]\n\n',
    ];
    const { events } = await run([{ raw }]);
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'y1', name: 'first', arguments: '{"a":1}' } },
      { type: 'tool_call', call: { id: 'y2', name: 'second', arguments: '{"b":2}' } },
      { type: 'done', stopReason: 'tool_calls' },
    ]);
  });

  it('invents an id for a call the server left without one, and reports tool_calls even on finish stop', async () => {
    const raw = [
      sseEvent(wireChunk({ tool_calls: [{ index: 0, function: { name: 'ping', arguments: '{}' } }] })),
      sseEvent(wireChunk({}, 'stop')),
      'data: [DONE]\n\n',
    ];
    const { events } = await run([{ raw }]);
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'call_0', name: 'ping', arguments: '{}' } },
      { type: 'done', stopReason: 'tool_calls' },
    ]);
  });
});

describe('openAiCompatible: the request', () => {
  it('posts model, stream flags and messages, mapping assistant tool calls and tool results', async () => {
    const messages: ModelRequest['messages'] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
          { id: 'call_2', name: 'get_time', arguments: '{}' },
        ],
      },
      { role: 'tool', callId: 'call_1', content: '{"temp":3}' },
      { role: 'tool', callId: 'call_2', content: '12:00' },
      { role: 'assistant', content: 'It is 3°C.' },
      {
        role: 'assistant',
        content: 'Checking again.',
        toolCalls: [{ id: 'call_3', name: 'x', arguments: '{}' }],
      },
      { role: 'user', content: 'thanks' },
    ];
    const { server } = await run([reply('ok')], { model: 'my-model', messages });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toEqual({
      model: 'my-model',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
            },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":3}' },
        { role: 'tool', tool_call_id: 'call_2', content: '12:00' },
        { role: 'assistant', content: 'It is 3°C.' },
        {
          role: 'assistant',
          content: 'Checking again.',
          tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'x', arguments: '{}' } }],
        },
        { role: 'user', content: 'thanks' },
      ],
    });
  });

  it('sends no tools field when the request has no tools or an empty list', async () => {
    const server = await serve([reply('a'), reply('b')]);
    const provider = openAiCompatible({ baseUrl: server.baseUrl });
    await drain(provider.stream(ask()));
    await drain(provider.stream(ask({ tools: [] })));
    expect(server.requests).toHaveLength(2);
    for (const body of server.requests) {
      expect(Object.keys(body)).not.toContain('tools');
      expect(Object.keys(body)).not.toContain('tool_choice');
    }
  });

  it('maps tools to function schemas', async () => {
    const parameters = {
      type: 'object',
      properties: { city: { type: 'string', description: 'the city' } },
      required: ['city'],
      additionalProperties: false,
    };
    const { server } = await run([reply('ok')], {
      tools: [
        { name: 'get_weather', description: 'Current weather', inputSchema: parameters },
        { name: 'noop', description: '', inputSchema: { type: 'object', properties: {} } },
      ],
    });
    expect(server.requests[0]?.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Current weather', parameters } },
      {
        type: 'function',
        function: { name: 'noop', description: '', parameters: { type: 'object', properties: {} } },
      },
    ]);
  });

  it('sends reasoning_effort low only for effort low', async () => {
    const server = await serve([reply('a'), reply('b'), reply('c')]);
    const provider = openAiCompatible({ baseUrl: server.baseUrl });
    await drain(provider.stream(ask({ effort: 'low' })));
    await drain(provider.stream(ask({ effort: 'normal' })));
    await drain(provider.stream(ask()));
    expect(server.requests.map((r) => r.reasoning_effort)).toEqual(['low', undefined, undefined]);
    expect(Object.keys(server.requests[1] ?? {})).not.toContain('reasoning_effort');
    expect(Object.keys(server.requests[2] ?? {})).not.toContain('reasoning_effort');
  });

  it('sends Authorization Bearer only when an API key is set', async () => {
    const server = await serve([reply('a'), reply('b'), reply('c')]);
    await drain(openAiCompatible({ baseUrl: server.baseUrl, apiKey: 'sk-test-123' }).stream(ask()));
    await drain(openAiCompatible({ baseUrl: server.baseUrl }).stream(ask()));
    await drain(openAiCompatible({ baseUrl: server.baseUrl, apiKey: '' }).stream(ask()));
    expect(server.headers.map((h) => h.authorization)).toEqual(['Bearer sk-test-123', undefined, undefined]);
    for (const headers of server.headers) {
      expect(headers['content-type']).toBe('application/json');
      expect(headers.accept).toBe('text/event-stream');
    }
  });

  it('a request that cannot be encoded -> a non-retryable error, nothing sent', async () => {
    const server = await serve([reply('never')]);
    const events = await drain(
      openAiCompatible({ baseUrl: server.baseUrl }).stream(
        ask({ tools: [{ name: 'bad', description: '', inputSchema: { max: 10n } }] }),
      ),
    );
    expect(events).toHaveLength(1);
    expect(lastError(events)).toMatchObject({ retryable: false, afterOutput: false });
    expect(lastError(events).kind).not.toBe('unreachable');
    expect(server.requests).toHaveLength(0);
  });

  it('joins the base URL and path whether or not the base URL ends in a slash', async () => {
    const server = await serve([reply('a')]);
    const events = await drain(openAiCompatible({ baseUrl: `${server.baseUrl}//` }).stream(ask()));
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'stop' });
    expect(server.requests).toHaveLength(1);
  });
});

describe('openAiCompatible: HTTP errors', () => {
  for (const [status, retryable] of [
    [500, true],
    [502, true],
    [503, true],
    [429, true],
    [400, false],
    [401, false],
    [404, false],
  ] as const) {
    it(`HTTP ${status} -> error http, retryable ${retryable}, with the server's message`, async () => {
      const message = `scripted failure ${status}`;
      const { server, events } = await run([{ status, body: { error: { message, type: 'x' } } }]);
      expect(events).toHaveLength(1);
      const error = lastError(events);
      expect(error).toMatchObject({ kind: 'http', status, retryable, afterOutput: false });
      expect(error.message).toContain(message);
      expect(error.message).toContain(String(status));
      expect(error.message).toContain(`${server.baseUrl}/chat/completions`);
    });
  }

  it('takes the message from other error body shapes', async () => {
    const { events: a } = await run([{ status: 500, body: { error: 'plain string error' } }]);
    expect(lastError(a).message).toContain('plain string error');
    const { events: b } = await run([{ status: 503, body: { message: 'top-level message' } }]);
    expect(lastError(b).message).toContain('top-level message');
    const { events: c } = await run([{ status: 502, body: 'Bad gateway' }]);
    expect(lastError(c).message).toContain('Bad gateway');
    const { events: d } = await run([{ status: 500, body: null }]);
    expect(lastError(d)).toMatchObject({ kind: 'http', status: 500, retryable: true });
  });
});

describe('openAiCompatible: transport failures', () => {
  it('connection refused -> unreachable, retryable, naming the URL', async () => {
    const port = await closedPort();
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    const events = await drain(openAiCompatible({ baseUrl }).stream(ask()));
    expect(events).toHaveLength(1);
    const error = lastError(events);
    expect(error).toMatchObject({ kind: 'unreachable', retryable: true, afterOutput: false });
    expect(error.message).toContain(`${baseUrl}/chat/completions`);
    expect(error.message).toContain('connection refused');
  });

  it('socket dropped before an answer -> unreachable, retryable', async () => {
    const { server, events } = await run([{ drop: true }]);
    expect(server.requests).toHaveLength(1);
    expect(events).toHaveLength(1);
    const error = lastError(events);
    expect(error).toMatchObject({ kind: 'unreachable', retryable: true, afterOutput: false });
    expect(error.message).toContain(server.baseUrl);
  });

  it('socket dropped after some text -> unreachable, not retryable, afterOutput', async () => {
    const raw = [sseEvent(wireChunk({ content: 'partial' }))];
    const { events } = await run([{ raw, destroy: true }]);
    expect(texts(events)).toEqual(['partial']);
    expect(lastError(events)).toMatchObject({ kind: 'unreachable', retryable: false, afterOutput: true });
  });

  it('abort via AbortSignal mid-stream -> aborted', async () => {
    const server = await serve([{ chunks: ['one ', 'two '], hold: true }]);
    const controller = new AbortController();
    const stream = openAiCompatible({ baseUrl: server.baseUrl }).stream(ask({ signal: controller.signal }));
    const events: ProviderEvent[] = [];
    let thrown: unknown;
    try {
      for await (const event of stream) {
        events.push(event);
        if (event.type === 'text_delta') controller.abort();
      }
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeUndefined();
    expectOneTerminal(events);
    expect(texts(events)[0]).toBe('one ');
    expect(lastError(events)).toMatchObject({ kind: 'aborted', retryable: false, afterOutput: true });
  }, 5_000);

  it('abort after the whole reply was received but not yet read -> aborted, not done', async () => {
    const server = await serve([reply('a reply long enough to arrive in many chunks at once')]);
    const controller = new AbortController();
    const stream = openAiCompatible({ baseUrl: server.baseUrl }).stream(ask({ signal: controller.signal }));
    const events: ProviderEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'text_delta' && !controller.signal.aborted) {
        // Let the rest of the response land in the client's buffers before aborting.
        await new Promise((resolve) => setTimeout(resolve, 100));
        controller.abort();
      }
    }
    expectOneTerminal(events);
    expect(lastError(events)).toMatchObject({ kind: 'aborted', afterOutput: true });
  });

  it('abort while waiting for headers -> aborted, afterOutput false', async () => {
    const server = await serve([{ chunks: ['late'], headerDelayMs: 2_000 }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    const events = await drain(
      openAiCompatible({ baseUrl: server.baseUrl }).stream(ask({ signal: controller.signal })),
    );
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(events).toHaveLength(1);
    expect(lastError(events)).toMatchObject({ kind: 'aborted', retryable: false, afterOutput: false });
  });

  it('an already aborted signal -> aborted without output', async () => {
    const server = await serve([reply('never')]);
    const events = await drain(
      openAiCompatible({ baseUrl: server.baseUrl }).stream(ask({ signal: AbortSignal.abort() })),
    );
    expect(events).toHaveLength(1);
    expect(lastError(events)).toMatchObject({ kind: 'aborted', afterOutput: false });
  });
});

describe('openAiCompatible: timeouts', () => {
  let previous: Dispatcher;
  let agent: Agent;
  beforeAll(() => {
    previous = getGlobalDispatcher();
    agent = new Agent({ headersTimeout: 300, bodyTimeout: 300 });
    setGlobalDispatcher(agent);
  });
  afterAll(async () => {
    setGlobalDispatcher(previous);
    await agent.close();
  });

  it('no headers in time -> timeout, retryable, afterOutput false', async () => {
    const { events } = await run([{ chunks: ['late'], headerDelayMs: 1_500 }]);
    expect(events).toHaveLength(1);
    const error = lastError(events);
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, afterOutput: false });
    expect(error.message).toContain('/chat/completions');
  });

  it('a stream that stalls after text -> timeout, not retryable, afterOutput true', async () => {
    const { events } = await run([{ chunks: ['some ', 'text'], hold: true }]);
    expect(texts(events)).toEqual(['some ', 'text']);
    expect(lastError(events)).toMatchObject({ kind: 'timeout', retryable: false, afterOutput: true });
  });
});

describe('openAiCompatible: broken streams', () => {
  it('cut off after some text without finish_reason -> protocol, afterOutput', async () => {
    const { events } = await run([{ chunks: ['Hello', ' there'], cutOff: true }]);
    expect(texts(events)).toEqual(['Hello', ' there']);
    const error = lastError(events);
    expect(error).toMatchObject({ kind: 'protocol', retryable: false, afterOutput: true });
    expect(events.filter((e) => e.type === 'done')).toEqual([]);
  });

  it('cut off in the middle of a tool call -> protocol, no tool_call emitted', async () => {
    const { events } = await run([
      { chunks: [], toolCalls: [{ name: 'f', argumentChunks: ['{"a":', '1'] }], cutOff: true },
    ]);
    expect(events.filter((e) => e.type === 'tool_call')).toEqual([]);
    expect(lastError(events)).toMatchObject({ kind: 'protocol' });
  });

  it('an empty 200 stream -> protocol, afterOutput false', async () => {
    const { events } = await run([{ raw: [] }]);
    expect(events).toHaveLength(1);
    expect(lastError(events)).toMatchObject({ kind: 'protocol', afterOutput: false });
  });

  it('a chunk that is not JSON -> protocol error, nothing after it', async () => {
    const raw = [
      sseEvent(wireChunk({ content: 'fine' })),
      'data: {"choices": [oops\n\n',
      sseEvent(wireChunk({ content: 'never seen' }, 'stop')),
      'data: [DONE]\n\n',
    ];
    const { events } = await run([{ raw }]);
    expect(texts(events)).toEqual(['fine']);
    const error = lastError(events);
    expect(error).toMatchObject({ kind: 'protocol', retryable: false, afterOutput: true });
    expect(error.message).toContain('JSON');
  });

  for (const [name, payload] of [
    ['null', 'null'],
    ['an array', '[1,2]'],
    ['a tool_calls object instead of a list', JSON.stringify(wireChunk({ tool_calls: { index: 0 } }))],
    ['a null tool call entry', JSON.stringify(wireChunk({ tool_calls: [null] }))],
  ] as const) {
    it(`a JSON chunk of the wrong shape (${name}) -> protocol error`, async () => {
      const raw = [sseEvent(wireChunk({ content: 'x' })), `data: ${payload}\n\n`, 'data: [DONE]\n\n'];
      const { events } = await run([{ raw }]);
      expect(lastError(events)).toMatchObject({ kind: 'protocol', retryable: false, afterOutput: true });
    });
  }

  it('an {"error":{...}} object mid-stream -> error event with its message', async () => {
    const { events } = await run([
      { chunks: ['partial '], error: { message: 'model overloaded mid-stream', type: 'server_error' } },
    ]);
    expect(texts(events)).toEqual(['partial ']);
    const error = lastError(events);
    expect(error.message).toContain('model overloaded mid-stream');
    expect(error).toMatchObject({ retryable: false, afterOutput: true });
  });

  it('an error object before any output -> error event, afterOutput false', async () => {
    const { events } = await run([{ chunks: [], error: 'context length exceeded' }]);
    expect(events).toHaveLength(1);
    const error = lastError(events);
    expect(error.message).toContain('context length exceeded');
    expect(error.afterOutput).toBe(false);
  });
});

describe('effort hint switch', () => {
  it('sends no reasoning_effort when effortHint is false, even for low effort', async () => {
    const server = await startScriptedModel([reply('a'), reply('b')]);
    try {
      for (const effortHint of [false, true]) {
        const provider = openAiCompatible({ baseUrl: server.baseUrl, effortHint });
        for await (const _ of provider.stream({
          model: 'm',
          messages: [{ role: 'user', content: 'x' }],
          effort: 'low',
        })) {
          // drain
        }
      }
      expect(server.requests[0]).not.toHaveProperty('reasoning_effort');
      expect(server.requests[1]?.reasoning_effort).toBe('low');
    } finally {
      await server.close();
    }
  });
});
