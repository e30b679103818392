// The route fallback chain, run with the real OpenAI-compatible client against scripted servers.
// `sleep` is a recorder, so backoff is asserted without waiting.
import { afterEach, describe, expect, it } from 'vitest';
import { openAiCompatible } from '../src/gateway/openai-compatible.ts';
import {
  type ModelCallRecord,
  type Route,
  type RoutedEvent,
  type RouteEntry,
  type RouterDeps,
  streamRoute,
} from '../src/gateway/router.ts';
import type { ModelRequest, Provider, ProviderEvent } from '../src/gateway/types.ts';
import { reply, type ScriptedModel, type ScriptStep, startScriptedModel } from './support/scripted-model.ts';

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

const entry = (server: ScriptedModel, providerName: string, model = 'test-model'): RouteEntry => ({
  providerName,
  provider: openAiCompatible({ baseUrl: server.baseUrl }),
  model,
});

const request = (signal?: AbortSignal): Omit<ModelRequest, 'model'> => ({
  messages: [{ role: 'user', content: 'hello' }],
  ...(signal ? { signal } : {}),
});

const status = (code: number, message = `status ${code}`): ScriptStep => ({
  status: code,
  body: { error: { message } },
});

/** Router deps that record every ledger row and every backoff instead of sleeping. */
function recorder(options: { retries?: number; backoffMs?: number; onSleep?: (ms: number) => void } = {}) {
  const records: ModelCallRecord[] = [];
  const sleeps: number[] = [];
  const deps: RouterDeps = {
    record: async (call) => {
      records.push(call);
    },
    sleep: async (ms) => {
      sleeps.push(ms);
      options.onSleep?.(ms);
    },
    retries: options.retries ?? 2,
    backoffMs: options.backoffMs ?? 100,
  };
  return { deps, records, sleeps };
}

/** Drains a routed stream, asserting it never throws and ends with its one terminal event. */
async function drain(stream: AsyncIterable<RoutedEvent>, onEvent?: (e: RoutedEvent) => void) {
  const events: RoutedEvent[] = [];
  let thrown: unknown;
  try {
    for await (const event of stream) {
      events.push(event);
      onEvent?.(event);
    }
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeUndefined();
  const terminal = events.filter((e) => e.type === 'done' || e.type === 'error');
  expect(terminal).toHaveLength(1);
  expect(events.at(-1)).toBe(terminal[0]);
  return events;
}

const models = (events: RoutedEvent[]) =>
  events.flatMap((e) => (e.type === 'model' ? [`${e.entry.providerName}/${e.entry.model}`] : []));
const text = (events: RoutedEvent[]) => events.map((e) => (e.type === 'text_delta' ? e.text : '')).join('');
const last = (events: RoutedEvent[]) => events.at(-1) as RoutedEvent;

describe('streamRoute', () => {
  it('success on the first entry: one model event, then exactly the provider’s events; one ok record', async () => {
    const server = await serve([reply('Hello there', { prompt_tokens: 21, completion_tokens: 7 })]);
    const twin = await serve([reply('Hello there', { prompt_tokens: 21, completion_tokens: 7 })]);
    const spare = await serve([]);
    const first = entry(server, 'local');
    const route: Route = { name: 'default', entries: [first, entry(spare, 'spare')] };
    const { deps, records, sleeps } = recorder();

    const events = await drain(streamRoute(route, request(), deps));
    const direct: ProviderEvent[] = [];
    for await (const e of openAiCompatible({ baseUrl: twin.baseUrl }).stream({
      ...request(),
      model: 'test-model',
    }))
      direct.push(e);

    expect(events[0]).toEqual({ type: 'model', entry: first });
    expect(events.slice(1)).toEqual(direct);
    expect(text(events)).toBe('Hello there');
    expect(last(events)).toEqual({ type: 'done', stopReason: 'stop' });
    expect(records).toHaveLength(1);
    expect(records[0]).toEqual({
      route: 'default',
      provider: 'local',
      model: 'test-model',
      tokensIn: 21,
      tokensOut: 7,
      latencyMs: expect.any(Number),
      outcome: 'ok',
    });
    expect(records[0]?.latencyMs).toBeGreaterThanOrEqual(0);
    expect(sleeps).toEqual([]);
    expect(server.requests[0]).toMatchObject({ model: 'test-model', stream: true });
    expect(spare.requests).toHaveLength(0);
  });

  it('passes tools and effort through and sends the entry’s model', async () => {
    const server = await serve([
      { chunks: [], toolCalls: [{ name: 'calculate', argumentChunks: ['{"expression":', '"1+1"}'] }] },
    ]);
    const route: Route = { name: 'tools', entries: [entry(server, 'local', 'qwen')] };
    const { deps } = recorder();
    const tools = [
      {
        name: 'calculate',
        description: 'Math.',
        inputSchema: { type: 'object', additionalProperties: false },
      },
    ];
    const events = await drain(streamRoute(route, { ...request(), tools, effort: 'low' }, deps));
    expect(events.filter((e) => e.type === 'tool_call')).toEqual([
      { type: 'tool_call', call: { id: 'call_0', name: 'calculate', arguments: '{"expression":"1+1"}' } },
    ]);
    expect(last(events)).toEqual({ type: 'done', stopReason: 'tool_calls' });
    expect(server.requests[0]).toMatchObject({ model: 'qwen', reasoning_effort: 'low' });
    expect(server.requests[0]?.tools).toHaveLength(1);
  });

  it('500 twice, then success on the same entry (retries 2): backoff 100, 200; records error, error, ok', async () => {
    const server = await serve([status(500), status(503), reply('third time')]);
    const spare = await serve([]);
    const route: Route = { name: 'default', entries: [entry(server, 'local'), entry(spare, 'spare')] };
    const { deps, records, sleeps } = recorder({ retries: 2, backoffMs: 100 });

    const events = await drain(streamRoute(route, request(), deps));
    expect(text(events)).toBe('third time');
    expect(last(events)).toEqual({ type: 'done', stopReason: 'stop' });
    expect(models(events)).toEqual(['local/test-model', 'local/test-model', 'local/test-model']);
    expect(sleeps).toEqual([100, 200]);
    expect(records.map((r) => r.outcome)).toEqual(['error', 'error', 'ok']);
    expect(records.map((r) => r.provider)).toEqual(['local', 'local', 'local']);
    expect(server.requests).toHaveLength(3);
    expect(spare.requests).toHaveLength(0);
    // No error of a retried attempt reaches the caller.
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
  });

  const backoffs: Array<[number, number, number[]]> = [
    [0, 500, []],
    [1, 500, [500]],
    [2, 250, [250, 500]],
    [3, 100, [100, 200, 400]],
    [4, 10, [10, 20, 40, 80]],
  ];
  it.each(backoffs)(
    'retries %i, backoff %i ms: sleeps %j before moving on, backoffMs * 2^(attempt-1)',
    async (retries, backoffMs, expected) => {
      const server = await serve(Array.from({ length: retries + 1 }, () => status(500)));
      const spare = await serve([reply('from the spare')]);
      const route: Route = { name: 'r', entries: [entry(server, 'a'), entry(spare, 'b')] };
      const { deps, records, sleeps } = recorder({ retries, backoffMs });
      const events = await drain(streamRoute(route, request(), deps));
      expect(sleeps).toEqual(expected);
      expect(server.requests).toHaveLength(retries + 1);
      expect(spare.requests).toHaveLength(1);
      expect(text(events)).toBe('from the spare');
      expect(records.map((r) => `${r.provider}:${r.outcome}`)).toEqual([
        ...Array.from({ length: retries + 1 }, () => 'a:error'),
        'b:ok',
      ]);
    },
  );

  const retryable: Array<[string, ScriptStep]> = [
    ['429', status(429)],
    ['502', status(502)],
    ['a dropped connection', { drop: true }],
  ];
  it.each(retryable)('%s before any output is retried on the same entry', async (_name, failing) => {
    const server = await serve([failing, reply('ok now')]);
    const { deps, records, sleeps } = recorder({ retries: 1, backoffMs: 7 });
    const events = await drain(streamRoute({ name: 'r', entries: [entry(server, 'a')] }, request(), deps));
    expect(text(events)).toBe('ok now');
    expect(sleeps).toEqual([7]);
    expect(records.map((r) => r.outcome)).toEqual(['error', 'ok']);
  });

  it.each([400, 401, 404, 422])(
    '%i (not retryable): no retry, the next entry is tried at once',
    async (code) => {
      const server = await serve([status(code, 'bad request'), reply('never sent')]);
      const spare = await serve([reply('spare answer')]);
      const route: Route = { name: 'default', entries: [entry(server, 'a', 'm1'), entry(spare, 'b', 'm2')] };
      const { deps, records, sleeps } = recorder({ retries: 2 });
      const events = await drain(streamRoute(route, request(), deps));
      expect(sleeps).toEqual([]);
      expect(server.requests).toHaveLength(1);
      expect(spare.requests).toHaveLength(1);
      expect(models(events)).toEqual(['a/m1', 'b/m2']);
      expect(text(events)).toBe('spare answer');
      expect(records.map((r) => `${r.provider}/${r.model}:${r.outcome}`)).toEqual(['a/m1:error', 'b/m2:ok']);
    },
  );

  it('all entries failing: one final error naming the route and every provider/model tried, not retryable', async () => {
    const one = await serve([status(500), status(500)]);
    const two = await serve([status(400, 'unknown model')]);
    const three = await serve([{ drop: true }, { drop: true }]);
    const route: Route = {
      name: 'research',
      entries: [entry(one, 'local', 'llama'), entry(two, 'cloud', 'gpt'), entry(three, 'backup', 'qwen')],
    };
    const { deps, records, sleeps } = recorder({ retries: 1, backoffMs: 50 });
    const events = await drain(streamRoute(route, request(), deps));
    const error = last(events) as ErrorEvent;
    expect(error).toMatchObject({ type: 'error', retryable: false, afterOutput: false, kind: 'unreachable' });
    expect(error.message).toMatch(
      /^every model of route research failed \(local\/llama, cloud\/gpt, backup\/qwen\); last: /,
    );
    expect(error.message).toContain('cannot reach');
    expect(events.filter((e) => e.type === 'error')).toHaveLength(1);
    expect(models(events)).toEqual(['local/llama', 'local/llama', 'cloud/gpt', 'backup/qwen', 'backup/qwen']);
    expect(sleeps).toEqual([50, 50]);
    expect(records).toHaveLength(5);
    expect(records.every((r) => r.outcome === 'error' && r.route === 'research')).toBe(true);
  });

  it('a one-entry route that fails passes the provider’s message on, not retryable', async () => {
    const server = await serve([status(500, 'overloaded'), status(500, 'overloaded')]);
    const { deps } = recorder({ retries: 1 });
    const events = await drain(
      streamRoute({ name: 'default', entries: [entry(server, 'local')] }, request(), deps),
    );
    const error = last(events) as ErrorEvent;
    expect(error).toMatchObject({ type: 'error', kind: 'http', status: 500, retryable: false });
    expect(error.message).toMatch(/answered HTTP 500: overloaded$/);
  });

  it('a failure after text was streamed is passed through; the next entry is not tried', async () => {
    const server = await serve([{ chunks: ['Half an ', 'answer'], cutOff: true }]);
    const spare = await serve([reply('a different answer')]);
    const route: Route = { name: 'default', entries: [entry(server, 'a'), entry(spare, 'b')] };
    const { deps, records, sleeps } = recorder({ retries: 2 });
    const events = await drain(streamRoute(route, request(), deps));
    expect(text(events)).toBe('Half an answer');
    expect(last(events)).toMatchObject({ type: 'error', kind: 'protocol', afterOutput: true });
    expect((last(events) as ErrorEvent).message).not.toMatch(/every model/);
    expect(models(events)).toEqual(['a/test-model']);
    expect(spare.requests).toHaveLength(0);
    expect(sleeps).toEqual([]);
    expect(records.map((r) => r.outcome)).toEqual(['error']);
  });

  it('an error mid-stream after text is final too', async () => {
    const server = await serve([{ chunks: ['Partial'], error: { message: 'gpu fell over' } }]);
    const spare = await serve([reply('other')]);
    const route: Route = { name: 'default', entries: [entry(server, 'a'), entry(spare, 'b')] };
    const { deps } = recorder();
    const events = await drain(streamRoute(route, request(), deps));
    expect(last(events)).toMatchObject({ type: 'error', afterOutput: true });
    expect((last(events) as ErrorEvent).message).toContain('gpu fell over');
    expect(spare.requests).toHaveLength(0);
  });

  it('an aborted signal before the call: no request, no record, a cancelled error', async () => {
    const server = await serve([reply('unused')]);
    const spare = await serve([reply('unused')]);
    const controller = new AbortController();
    controller.abort();
    const route: Route = { name: 'default', entries: [entry(server, 'a'), entry(spare, 'b')] };
    const { deps, records } = recorder();
    const events = await drain(streamRoute(route, request(controller.signal), deps));
    expect(events).toEqual([
      {
        type: 'error',
        kind: 'aborted',
        message: 'the request was cancelled',
        retryable: false,
        afterOutput: false,
      },
    ]);
    expect(server.requests).toHaveLength(0);
    expect(spare.requests).toHaveLength(0);
    expect(records).toEqual([]);
  });

  it('aborted during a backoff: stops, tries no further entry, ends cancelled (not with the earlier failure)', async () => {
    const server = await serve([status(500), reply('unused')]);
    const spare = await serve([reply('unused')]);
    const controller = new AbortController();
    const route: Route = { name: 'default', entries: [entry(server, 'a'), entry(spare, 'b')] };
    const { deps, records, sleeps } = recorder({ onSleep: () => controller.abort() });
    const events = await drain(streamRoute(route, request(controller.signal), deps));
    expect(sleeps).toEqual([100]);
    expect(server.requests).toHaveLength(1);
    expect(spare.requests).toHaveLength(0);
    expect(models(events)).toEqual(['a/test-model']);
    expect(records.map((r) => r.outcome)).toEqual(['error']);
    expect(last(events)).toEqual({
      type: 'error',
      kind: 'aborted',
      message: 'the request was cancelled',
      retryable: false,
      afterOutput: false,
    });
  });

  it('aborted while streaming: the cancellation is passed through and no further entry is tried', async () => {
    const server = await serve([{ chunks: ['Thinking'], hold: true }]);
    const spare = await serve([reply('unused')]);
    const controller = new AbortController();
    const route: Route = { name: 'default', entries: [entry(server, 'a'), entry(spare, 'b')] };
    const { deps, records } = recorder();
    const events = await drain(streamRoute(route, request(controller.signal), deps), (e) => {
      if (e.type === 'text_delta') controller.abort();
    });
    expect(last(events)).toMatchObject({ type: 'error', kind: 'aborted', retryable: false });
    expect(spare.requests).toHaveLength(0);
    expect(records.map((r) => r.outcome)).toEqual(['error']);
  });

  it('aborted while waiting for the first answer of one entry: no other entry is tried', async () => {
    const server = await serve([{ chunks: ['late'], headerDelayMs: 2_000 }]);
    const spare = await serve([reply('unused')]);
    const controller = new AbortController();
    const route: Route = { name: 'default', entries: [entry(server, 'a'), entry(spare, 'b')] };
    const { deps } = recorder();
    setTimeout(() => controller.abort(), 50);
    const events = await drain(streamRoute(route, request(controller.signal), deps));
    expect(last(events)).toMatchObject({ type: 'error', kind: 'aborted' });
    expect(spare.requests).toHaveLength(0);
  });

  it('a route with no entries ends with an error that says so', async () => {
    const { deps, records } = recorder();
    const events = await drain(streamRoute({ name: 'empty', entries: [] }, request(), deps));
    expect(events).toHaveLength(1);
    expect(last(events)).toMatchObject({ type: 'error', retryable: false, afterOutput: false });
    expect((last(events) as ErrorEvent).kind).not.toBe('aborted');
    expect((last(events) as ErrorEvent).message).toMatch(/route empty has no models/);
    expect(records).toEqual([]);
  });

  describe('with providers that break their contract', () => {
    const fake = (kind: string, script: ProviderEvent[][]): Provider => {
      let call = 0;
      return {
        kind,
        async *stream() {
          for (const event of script[call++] ?? []) yield event;
        },
      };
    };
    const fail = (afterOutput: boolean): ProviderEvent => ({
      type: 'error',
      kind: 'unreachable',
      message: 'connection reset',
      retryable: true,
      afterOutput,
    });

    it('an error after text that claims no output is still final: no retry, no second model', async () => {
      const first = fake('x', [
        [{ type: 'text_delta', text: 'Hal' }, fail(false)],
        [{ type: 'done', stopReason: 'stop' }],
      ]);
      const second = fake('y', [[{ type: 'done', stopReason: 'stop' }]]);
      const route: Route = {
        name: 'r',
        entries: [
          { providerName: 'a', provider: first, model: 'm' },
          { providerName: 'b', provider: second, model: 'm' },
        ],
      };
      const { deps, sleeps } = recorder();
      const events = await drain(streamRoute(route, request(), deps));
      expect(models(events)).toEqual(['a/m']);
      expect(sleeps).toEqual([]);
      expect(last(events)).toMatchObject({ type: 'error', afterOutput: true, retryable: false });
    });

    it('a stream that ends without done or error still ends with one terminal event', async () => {
      const silent = fake('x', [[{ type: 'text_delta', text: 'Hi' }]]);
      const { deps, records } = recorder();
      const events = await drain(
        streamRoute(
          { name: 'r', entries: [{ providerName: 'a', provider: silent, model: 'm' }] },
          request(),
          deps,
        ),
      );
      expect(last(events)).toMatchObject({ type: 'error', kind: 'protocol', afterOutput: true });
      expect(records.map((r) => r.outcome)).toEqual(['error']);
    });

    it('nothing after the first terminal event is passed on', async () => {
      const chatty = fake('x', [
        [
          { type: 'text_delta', text: 'ok' },
          { type: 'done', stopReason: 'stop' },
          { type: 'text_delta', text: ' and more' },
        ],
      ]);
      const { deps } = recorder();
      const events = await drain(
        streamRoute(
          { name: 'r', entries: [{ providerName: 'a', provider: chatty, model: 'm' }] },
          request(),
          deps,
        ),
      );
      expect(text(events)).toBe('ok');
    });
  });
});
