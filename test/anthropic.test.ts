import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type AnthropicOptions, anthropic } from '../src/gateway/anthropic.ts';
import type { ChatMessage, ModelRequest, ProviderEvent } from '../src/gateway/types.ts';
import { drain, expectOneTerminal } from './support/provider-stream.ts';
import {
  type AnthropicStep,
  anthropicError,
  messageEvents,
  type ScriptedAnthropic,
  sseEvent,
  startScriptedAnthropic,
  textReply,
} from './support/scripted-anthropic.ts';

type ErrorEvent = Extract<ProviderEvent, { type: 'error' }>;

const servers: ScriptedAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(steps: AnthropicStep[]): Promise<ScriptedAnthropic> {
  const server = await startScriptedAnthropic(steps);
  servers.push(server);
  return server;
}

const ask = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'claude-test',
  messages: [{ role: 'user', content: 'hello' }],
  ...overrides,
});

async function run(
  steps: AnthropicStep[],
  overrides: Partial<ModelRequest> = {},
  options: Omit<AnthropicOptions, 'baseUrl'> = {},
) {
  const server = await serve(steps);
  const provider = anthropic({ baseUrl: server.baseUrl, ...options });
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

describe('anthropic: streamed replies', () => {
  it('names itself for logs', () => {
    expect(anthropic({ baseUrl: 'http://127.0.0.1:1' }).kind).toBe('anthropic');
  });

  it('streams text as ordered text_delta events, then usage, then done stop', async () => {
    const text = 'The quick brown fox jumps over the lazy dog. ¿Qué tal? 😀 — fin.';
    const { events } = await run([textReply(text, { input_tokens: 31, output_tokens: 17 })]);
    expect(texts(events)).toEqual(text.match(/.{1,4}/gs));
    expect(texts(events).join('')).toBe(text);
    expect(events.filter((e) => e.type === 'usage')).toHaveLength(1);
    expect(events.slice(-2)).toEqual([
      { type: 'usage', inputTokens: 31, outputTokens: 17 },
      { type: 'done', stopReason: 'stop' },
    ]);
  });

  it('gives exactly the server deltas, in order, ignoring pings', async () => {
    const chunks = ['Hel', 'lo', ', ', 'wor', 'ld', '!'];
    const { events } = await run([
      { blocks: [{ text: chunks }], ping: true, usage: { input_tokens: 1, output_tokens: 2 } },
    ]);
    expect(events).toEqual([
      ...chunks.map((text) => ({ type: 'text_delta', text })),
      { type: 'usage', inputTokens: 1, outputTokens: 2 },
      { type: 'done', stopReason: 'stop' },
    ]);
  });

  it('counts cache reads and writes as input tokens', async () => {
    const { events } = await run([
      {
        blocks: [{ text: ['ok'] }],
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 100,
          cache_read_input_tokens: 1000,
          output_tokens: 3,
        },
      },
    ]);
    expect(events.filter((e) => e.type === 'usage')).toEqual([
      { type: 'usage', inputTokens: 1110, outputTokens: 3 },
    ]);
  });

  it('maps stop reasons', async () => {
    for (const [wire, stopReason] of [
      ['end_turn', 'stop'],
      ['stop_sequence', 'stop'],
      ['max_tokens', 'length'],
      ['refusal', 'other'],
    ] as const) {
      const { events } = await run([{ blocks: [{ text: ['abc'] }], stopReason: wire }]);
      expect(events.at(-1), wire).toEqual({ type: 'done', stopReason });
    }
  });

  it('reassembles SSE and multi-byte UTF-8 split at arbitrary byte boundaries on the wire', async () => {
    const text = 'naïve café ☕ 😀 日本語';
    const { opening, blocks, closing } = messageEvents({
      blocks: [{ text: [text.slice(0, 9), text.slice(9)] }],
      usage: { input_tokens: 3, output_tokens: 4 },
    });
    const body = Buffer.from([...opening, ...blocks.flat(), ...closing].join(''));
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

  it('finishes at message_stop even if the server leaves the connection open', async () => {
    const { opening, blocks, closing } = messageEvents({ blocks: [{ text: ['hi'] }] });
    const { events } = await run([{ raw: [...opening, ...blocks.flat(), ...closing], hold: true }]);
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'stop' });
  }, 5_000);

  it('ignores event types it does not know', async () => {
    const { opening, blocks, closing } = messageEvents({ blocks: [{ text: ['hi'] }] });
    const raw = [...opening, sseEvent({ type: 'something_new', x: 1 }), ...blocks.flat(), ...closing];
    const { events } = await run([{ raw }]);
    expect(texts(events)).toEqual(['hi']);
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'stop' });
  });
});

describe('anthropic: thinking and tool use', () => {
  it('keeps thinking out of the text', async () => {
    const { events } = await run([
      {
        blocks: [
          { thinking: ['Let me think', ' about SECRET reasoning'] },
          { text: ['The answer', ' is 4.'] },
        ],
        usage: { input_tokens: 5, output_tokens: 40 },
      },
    ]);
    expect(events).toEqual([
      { type: 'text_delta', text: 'The answer' },
      { type: 'text_delta', text: ' is 4.' },
      { type: 'usage', inputTokens: 5, outputTokens: 40 },
      { type: 'done', stopReason: 'stop' },
    ]);
    expect(JSON.stringify(events)).not.toContain('SECRET');
  });

  it('assembles input_json_delta fragments into one tool_call with the exact JSON text', async () => {
    const args = '{"city": "Zürich", "units":"metric","days":[1,2,3],"note":"a \\"quoted\\" word"}';
    const inputChunks = args.match(/.{1,3}/gs) ?? [];
    expect(inputChunks.length).toBeGreaterThan(10);
    const { events } = await run([
      {
        blocks: [{ toolUse: { id: 'toolu_abc', name: 'get_weather', inputChunks } }],
        usage: { input_tokens: 50, output_tokens: 20 },
      },
    ]);
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'toolu_abc', name: 'get_weather', arguments: args } },
      { type: 'usage', inputTokens: 50, outputTokens: 20 },
      { type: 'done', stopReason: 'tool_calls' },
    ]);
  });

  it('gives thinking, text and two tool_use blocks as text then both calls in block order', async () => {
    const { events } = await run([
      {
        blocks: [
          { thinking: ['hidden'] },
          { text: ['Let me ', 'check.'] },
          { toolUse: { id: 'toolu_1', name: 'search', inputChunks: ['{"q":', '"cats"', '}'] } },
          { toolUse: { id: 'toolu_2', name: 'fetch', inputChunks: ['{"url":"https://', 'example.com/"}'] } },
        ],
      },
    ]);
    expect(events).toEqual([
      { type: 'text_delta', text: 'Let me ' },
      { type: 'text_delta', text: 'check.' },
      { type: 'tool_call', call: { id: 'toolu_1', name: 'search', arguments: '{"q":"cats"}' } },
      {
        type: 'tool_call',
        call: { id: 'toolu_2', name: 'fetch', arguments: '{"url":"https://example.com/"}' },
      },
      { type: 'done', stopReason: 'tool_calls' },
    ]);
  });

  it('gives a tool call without input fragments the arguments {}', async () => {
    const { events } = await run([
      { blocks: [{ toolUse: { id: 'toolu_x', name: 'now', inputChunks: [] } }] },
    ]);
    expect(events).toEqual([
      { type: 'tool_call', call: { id: 'toolu_x', name: 'now', arguments: '{}' } },
      { type: 'done', stopReason: 'tool_calls' },
    ]);
  });
});

describe('anthropic: the request', () => {
  const conversation: ChatMessage[] = [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'weather and time?' },
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { id: 'toolu_2', name: 'get_time', arguments: '{"broken' },
      ],
    },
    { role: 'tool', callId: 'toolu_1', content: '{"temp":3}' },
    { role: 'tool', callId: 'toolu_2', content: '12:00' },
    { role: 'user', content: 'and be quick' },
    { role: 'assistant', content: 'It is 3°C at noon.' },
    { role: 'system', content: 'answer in English' },
    {
      role: 'assistant',
      content: 'Checking again.',
      toolCalls: [{ id: 'toolu_3', name: 'x', arguments: '{}' }],
    },
    { role: 'tool', callId: 'toolu_3', content: 'done' },
  ];

  it('posts to /v1/messages with system top-level, merged tool results and strict alternation', async () => {
    const { server } = await run([textReply('ok')], { model: 'claude-x', messages: conversation });
    expect(server.requests).toEqual([
      {
        model: 'claude-x',
        max_tokens: 4096,
        stream: true,
        system: 'be brief\n\nanswer in English',
        messages: [
          { role: 'user', content: 'weather and time?' },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
              // Arguments that are not valid JSON are sent as an empty input.
              { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: '{"temp":3}' },
              { type: 'tool_result', tool_use_id: 'toolu_2', content: '12:00' },
              { type: 'text', text: 'and be quick' },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'It is 3°C at noon.' },
              { type: 'text', text: 'Checking again.' },
              { type: 'tool_use', id: 'toolu_3', name: 'x', input: {} },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_3', content: 'done' }] },
        ],
      },
    ]);
    const roles = ((server.requests[0]?.messages ?? []) as Array<{ role: string }>).map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
  });

  it('omits system when there is none and merges consecutive user messages', async () => {
    const { server } = await run([textReply('ok')], {
      messages: [
        { role: 'user', content: 'one' },
        { role: 'user', content: 'two' },
      ],
    });
    const body = server.requests[0] ?? {};
    expect(Object.keys(body)).not.toContain('system');
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
    ]);
  });

  it('sends no tools field when the request has no tools or an empty list', async () => {
    const server = await serve([textReply('a'), textReply('b')]);
    const provider = anthropic({ baseUrl: server.baseUrl });
    await drain(provider.stream(ask()));
    await drain(provider.stream(ask({ tools: [] })));
    expect(server.requests).toHaveLength(2);
    for (const body of server.requests) {
      expect(Object.keys(body)).not.toContain('tools');
      expect(Object.keys(body)).not.toContain('tool_choice');
    }
  });

  it('maps tools to name, description and input_schema', async () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string', description: 'the city' } },
      required: ['city'],
    };
    const { server } = await run([textReply('ok')], {
      tools: [
        { name: 'get_weather', description: 'Current weather', inputSchema: schema },
        { name: 'noop', description: '', inputSchema: { type: 'object', properties: {} } },
      ],
    });
    expect(server.requests[0]?.tools).toEqual([
      { name: 'get_weather', description: 'Current weather', input_schema: schema },
      { name: 'noop', description: '', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it('sends x-api-key only when set, and always anthropic-version and JSON', async () => {
    const server = await serve([textReply('a'), textReply('b'), textReply('c')]);
    await drain(anthropic({ baseUrl: server.baseUrl, apiKey: 'sk-ant-test' }).stream(ask()));
    await drain(anthropic({ baseUrl: server.baseUrl }).stream(ask()));
    await drain(anthropic({ baseUrl: server.baseUrl, apiKey: '' }).stream(ask()));
    expect(server.headers.map((h) => h['x-api-key'])).toEqual(['sk-ant-test', undefined, undefined]);
    for (const headers of server.headers) {
      expect(headers['anthropic-version']).toBe('2023-06-01');
      expect(headers['content-type']).toBe('application/json');
      expect(headers.authorization).toBeUndefined();
    }
  });

  it('joins the base URL and path whether or not the base URL ends in slashes', async () => {
    const server = await serve([textReply('a')]);
    const events = await drain(anthropic({ baseUrl: `${server.baseUrl}//` }).stream(ask()));
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'stop' });
    expect(server.requests).toHaveLength(1);
  });

  it('honours maxTokens', async () => {
    const { server } = await run([textReply('a')], {}, { maxTokens: 1000 });
    expect(server.requests[0]?.max_tokens).toBe(1000);
  });

  it('never sends thinking without a thinkingBudget option', async () => {
    const server = await serve([textReply('a'), textReply('b'), textReply('c')]);
    const provider = anthropic({ baseUrl: server.baseUrl });
    await drain(provider.stream(ask({ effort: 'low' })));
    await drain(provider.stream(ask({ effort: 'normal' })));
    await drain(provider.stream(ask()));
    for (const body of server.requests) {
      expect(Object.keys(body)).not.toContain('thinking');
      expect(body.max_tokens).toBe(4096);
    }
  });

  it('maps effort to thinking: normal (and default) -> normal budget, low -> none at 0', async () => {
    const server = await serve([textReply('a'), textReply('b'), textReply('c')]);
    const provider = anthropic({ baseUrl: server.baseUrl, thinkingBudget: { low: 0, normal: 8000 } });
    await drain(provider.stream(ask({ effort: 'normal' })));
    await drain(provider.stream(ask()));
    await drain(provider.stream(ask({ effort: 'low' })));
    const [normal, unset, low] = server.requests;
    expect(normal?.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
    expect(unset?.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
    // max_tokens must exceed the budget: the reply keeps its own 4096 on top.
    expect(normal?.max_tokens).toBe(4096 + 8000);
    expect(Object.keys(low ?? {})).not.toContain('thinking');
    expect(low?.max_tokens).toBe(4096);
  });

  it('uses the low budget for effort low when it is above 0', async () => {
    const { server } = await run(
      [textReply('a')],
      { effort: 'low' },
      { maxTokens: 1000, thinkingBudget: { low: 1024, normal: 8000 } },
    );
    expect(server.requests[0]?.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(server.requests[0]?.max_tokens).toBe(2024);
  });

  it('leaves thinking off while a tool loop is open, on again once the turn has ended', async () => {
    const server = await serve([textReply('a'), textReply('b')]);
    const provider = anthropic({ baseUrl: server.baseUrl, thinkingBudget: { low: 0, normal: 8000 } });
    const loop: ChatMessage[] = [
      { role: 'user', content: 'time?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'toolu_1', name: 'now', arguments: '{}' }] },
      { role: 'tool', callId: 'toolu_1', content: '12:00' },
    ];
    await drain(provider.stream(ask({ messages: loop })));
    await drain(
      provider.stream(
        ask({
          messages: [...loop, { role: 'assistant', content: 'Noon.' }, { role: 'user', content: 'thanks' }],
        }),
      ),
    );
    expect(Object.keys(server.requests[0] ?? {})).not.toContain('thinking');
    expect(server.requests[1]?.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
  });

  it('a request that cannot be encoded -> a non-retryable error, nothing sent', async () => {
    const server = await serve([textReply('never')]);
    const events = await drain(
      anthropic({ baseUrl: server.baseUrl }).stream(
        ask({ tools: [{ name: 'bad', description: '', inputSchema: { max: 10n } }] }),
      ),
    );
    expect(events).toHaveLength(1);
    expect(lastError(events)).toMatchObject({ kind: 'protocol', retryable: false, afterOutput: false });
    expect(server.requests).toHaveLength(0);
  });
});

describe('anthropic: HTTP errors', () => {
  for (const [status, type, retryable] of [
    [529, 'overloaded_error', true],
    [500, 'api_error', true],
    [503, 'api_error', true],
    [429, 'rate_limit_error', true],
    [400, 'invalid_request_error', false],
    [401, 'authentication_error', false],
    [404, 'not_found_error', false],
  ] as const) {
    it(`HTTP ${status} -> error http, retryable ${retryable}, with the API's message`, async () => {
      const message = `scripted ${type} ${status}`;
      const { server, events } = await run([{ status, body: anthropicError(type, message) }]);
      expect(events).toHaveLength(1);
      const error = lastError(events);
      expect(error).toMatchObject({ kind: 'http', status, retryable, afterOutput: false });
      expect(error.message).toContain(message);
      expect(error.message).toContain(String(status));
      expect(error.message).toContain(`${server.baseUrl}/v1/messages`);
    });
  }

  it('takes a non-JSON error body as text', async () => {
    const { events } = await run([{ status: 502, body: 'Bad gateway' }]);
    expect(lastError(events)).toMatchObject({ kind: 'http', status: 502, retryable: true });
    expect(lastError(events).message).toContain('Bad gateway');
  });
});

describe('anthropic: errors mid-stream', () => {
  it('an overloaded_error event before any output -> http, retryable, afterOutput false', async () => {
    const { events } = await run([
      { blocks: [{ thinking: ['quiet'] }], error: { type: 'overloaded_error', message: 'Overloaded' } },
    ]);
    expect(events).toHaveLength(1);
    const error = lastError(events);
    expect(error).toMatchObject({ kind: 'http', retryable: true, afterOutput: false });
    expect(error.message).toContain('Overloaded');
  });

  it('an error event after text -> http, afterOutput, not retryable', async () => {
    const { events } = await run([
      { blocks: [{ text: ['partial '] }], error: { type: 'api_error', message: 'Internal server error' } },
    ]);
    expect(texts(events)).toEqual(['partial ']);
    const error = lastError(events);
    expect(error).toMatchObject({ kind: 'http', retryable: false, afterOutput: true });
    expect(error.message).toContain('Internal server error');
  });

  it('a non-transient error event -> not retryable', async () => {
    const { events } = await run([
      { blocks: [], error: { type: 'invalid_request_error', message: 'prompt is too long' } },
    ]);
    expect(lastError(events)).toMatchObject({ kind: 'http', retryable: false, afterOutput: false });
  });
});

describe('anthropic: transport failures', () => {
  it('connection refused -> unreachable, retryable, naming the URL', async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}`;
    const events = await drain(anthropic({ baseUrl }).stream(ask()));
    expect(events).toHaveLength(1);
    const error = lastError(events);
    expect(error).toMatchObject({ kind: 'unreachable', retryable: true, afterOutput: false });
    expect(error.message).toContain(`${baseUrl}/v1/messages`);
    expect(error.message).toContain('connection refused');
  });

  it('socket dropped before an answer -> unreachable, retryable', async () => {
    const { server, events } = await run([{ drop: true }]);
    expect(server.requests).toHaveLength(1);
    expect(events).toHaveLength(1);
    expect(lastError(events)).toMatchObject({ kind: 'unreachable', retryable: true, afterOutput: false });
  });

  it('socket dropped after some text -> unreachable, not retryable, afterOutput', async () => {
    const { opening, blocks } = messageEvents({ blocks: [{ text: ['partial'] }] });
    const { events } = await run([{ raw: [...opening, ...(blocks[0] ?? []).slice(0, 2)], destroy: true }]);
    expect(texts(events)).toEqual(['partial']);
    expect(lastError(events)).toMatchObject({ kind: 'unreachable', retryable: false, afterOutput: true });
  });

  it('abort via AbortSignal mid-stream -> aborted', async () => {
    const server = await serve([{ blocks: [{ text: ['one ', 'two '] }], hold: true }]);
    const controller = new AbortController();
    const stream = anthropic({ baseUrl: server.baseUrl }).stream(ask({ signal: controller.signal }));
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

  it('an already aborted signal -> aborted without output', async () => {
    const server = await serve([textReply('never')]);
    const events = await drain(
      anthropic({ baseUrl: server.baseUrl }).stream(ask({ signal: AbortSignal.abort() })),
    );
    expect(events).toHaveLength(1);
    expect(lastError(events)).toMatchObject({ kind: 'aborted', afterOutput: false });
  });
});

describe('anthropic: broken streams', () => {
  it('cut off after some text without message_stop -> protocol, afterOutput', async () => {
    const { events } = await run([{ blocks: [{ text: ['Hello', ' there'] }], cutOff: true }]);
    expect(texts(events)).toEqual(['Hello', ' there']);
    expect(lastError(events)).toMatchObject({ kind: 'protocol', retryable: false, afterOutput: true });
    expect(events.filter((e) => e.type === 'done' || e.type === 'usage')).toEqual([]);
  });

  it('cut off after message_delta but before message_stop -> protocol', async () => {
    const { opening, blocks, closing } = messageEvents({ blocks: [{ text: ['almost'] }] });
    const { events } = await run([{ raw: [...opening, ...blocks.flat(), ...closing.slice(0, 1)] }]);
    expect(lastError(events)).toMatchObject({ kind: 'protocol', afterOutput: true });
  });

  it('cut off in the middle of a tool_use block -> protocol, no tool_call emitted', async () => {
    const { opening, blocks } = messageEvents({
      blocks: [{ toolUse: { name: 'f', inputChunks: ['{"a":', '1'] } }],
    });
    const { events } = await run([{ raw: [...opening, ...(blocks[0] ?? []).slice(0, -1)] }]);
    expect(events).toHaveLength(1);
    expect(lastError(events)).toMatchObject({ kind: 'protocol', afterOutput: false });
  });

  it('an empty 200 stream -> protocol, afterOutput false', async () => {
    const { events } = await run([{ raw: [] }]);
    expect(events).toHaveLength(1);
    expect(lastError(events)).toMatchObject({ kind: 'protocol', afterOutput: false });
  });

  it('an event that is not JSON -> protocol error, nothing after it', async () => {
    const { opening, blocks, closing } = messageEvents({ blocks: [{ text: ['fine', 'never seen'] }] });
    const [start = '', first = '', ...rest] = blocks[0] ?? [];
    const raw = [
      ...opening,
      start,
      first,
      'event: content_block_delta\ndata: {"type": oops\n\n',
      ...rest,
      ...closing,
    ];
    const { events } = await run([{ raw }]);
    expect(texts(events)).toEqual(['fine']);
    const error = lastError(events);
    expect(error).toMatchObject({ kind: 'protocol', retryable: false, afterOutput: true });
    expect(error.message).toContain('JSON');
  });

  it('an input_json_delta outside a tool_use block -> protocol error', async () => {
    const { opening, closing } = messageEvents({ blocks: [] });
    const raw = [
      ...opening,
      sseEvent({
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{' },
      }),
      ...closing,
    ];
    const { events } = await run([{ raw }]);
    expect(lastError(events)).toMatchObject({ kind: 'protocol', afterOutput: false });
  });
});
