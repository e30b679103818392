import { isObject, wireBody } from './anthropic-wire.ts';
import { openEventStream, readEventStream } from './event-stream.ts';
import { errorText } from './http-errors.ts';
import type { ModelRequest, Provider, ProviderEvent, StopReason } from './types.ts';

export interface AnthropicOptions {
  /** The API root without `/v1`, e.g. https://api.anthropic.com. */
  baseUrl: string;
  apiKey?: string;
  /** Room for the visible reply; a thinking budget is added on top of it. Default 4096. */
  maxTokens?: number;
  /** Extended-thinking budgets per effort; without it no request ever asks for thinking. */
  thinkingBudget?: { low: number; normal: number };
}

const API_VERSION = '2023-06-01';
/** Error types the API documents as transient. */
const RETRYABLE_ERROR_TYPES = new Set(['overloaded_error', 'api_error', 'rate_limit_error']);

export function anthropic(options: AnthropicOptions): Provider {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/v1/messages`;
  return {
    kind: 'anthropic',
    stream: (req) => streamMessage(url, options, req),
  };
}

type ErrorEvent = Extract<ProviderEvent, { type: 'error' }>;

/** A content block between its content_block_start and content_block_stop. */
interface OpenBlock {
  type: string;
  id: string;
  name: string;
  /** The input_json_delta fragments so far. */
  json: string;
  /** The `input` of content_block_start: empty in real streams, filled by some proxies. */
  input: unknown;
}

async function* streamMessage(
  url: string,
  options: AnthropicOptions,
  req: ModelRequest,
): AsyncGenerator<ProviderEvent> {
  let afterOutput = false;
  const fail = (kind: ErrorEvent['kind'], message: string, extra: Partial<ErrorEvent> = {}) =>
    ({ type: 'error', kind, message, retryable: false, afterOutput, ...extra }) as ProviderEvent;

  let body: string;
  try {
    body = JSON.stringify(wireBody(req, options));
  } catch (error) {
    // Deterministic: the same request would fail the same way on any retry or other model.
    yield fail('protocol', `cannot encode the request for ${url}: ${(error as Error).message ?? error}`);
    return;
  }

  const opened = await openEventStream(
    url,
    {
      'anthropic-version': API_VERSION,
      ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
    },
    body,
    req.signal,
  );
  if ('error' in opened) {
    yield opened.error;
    return;
  }

  const blocks = new Map<number, OpenBlock>();
  const usage = { input: 0, cacheWrite: 0, cacheRead: 0, output: 0, seen: false };
  let stopReason: StopReason | undefined;
  let calledTools = false;
  let finished = false;

  const toolCallOf = (block: OpenBlock): ProviderEvent => {
    afterOutput = true;
    calledTools = true;
    let args = block.json;
    // Some proxies send the whole input at content_block_start and no deltas.
    if (args === '' && isObject(block.input) && Object.keys(block.input).length > 0) {
      args = JSON.stringify(block.input);
    }
    return { type: 'tool_call', call: { id: block.id, name: block.name, arguments: args || '{}' } };
  };

  const takeUsage = (wire: unknown) => {
    if (!isObject(wire)) return;
    const w = wire as WireUsage;
    usage.seen = true;
    // Counts are cumulative: a later event's figure replaces the earlier one.
    if (typeof w.input_tokens === 'number') usage.input = w.input_tokens;
    if (typeof w.cache_creation_input_tokens === 'number') usage.cacheWrite = w.cache_creation_input_tokens;
    if (typeof w.cache_read_input_tokens === 'number') usage.cacheRead = w.cache_read_input_tokens;
    if (typeof w.output_tokens === 'number') usage.output = w.output_tokens;
  };

  /** The events of one SSE payload. Throws on an event of the wrong shape. */
  const interpret = (payload: string): ProviderEvent[] => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch {
      return [fail('protocol', `${url} sent a stream event that is not JSON`)];
    }
    if (!isObject(parsed)) return [fail('protocol', `${url} sent a stream event that is not an object`)];
    const event = parsed as WireEvent;
    switch (event.type) {
      case 'message_start':
        takeUsage(event.message?.usage);
        return [];
      case 'content_block_start': {
        const index = indexOf(event);
        const block = event.content_block;
        if (!isObject(block)) throw new Error('content_block_start without a content block');
        const open: OpenBlock = {
          type: String(block.type),
          id: typeof block.id === 'string' ? block.id : `toolu_${index}`,
          name: typeof block.name === 'string' ? block.name : '',
          json: '',
          input: block.input,
        };
        blocks.set(index, open);
        if (open.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          afterOutput = true;
          return [{ type: 'text_delta', text: block.text }];
        }
        return [];
      }
      case 'content_block_delta': {
        const index = indexOf(event);
        const delta = event.delta;
        if (!isObject(delta)) throw new Error('content_block_delta without a delta');
        if (delta.type === 'text_delta') {
          if (typeof delta.text !== 'string') throw new Error('text_delta without text');
          if (delta.text === '') return [];
          afterOutput = true;
          return [{ type: 'text_delta', text: delta.text }];
        }
        if (delta.type === 'input_json_delta') {
          const block = blocks.get(index);
          if (block?.type !== 'tool_use') throw new Error(`input_json_delta outside a tool_use block`);
          if (typeof delta.partial_json !== 'string')
            throw new Error('input_json_delta without partial_json');
          block.json += delta.partial_json;
        }
        // thinking_delta, signature_delta and anything newer: the reasoning stays private.
        return [];
      }
      case 'content_block_stop': {
        const index = indexOf(event);
        const block = blocks.get(index);
        blocks.delete(index);
        return block?.type === 'tool_use' ? [toolCallOf(block)] : [];
      }
      case 'message_delta': {
        const reason = event.delta?.stop_reason;
        if (typeof reason === 'string') stopReason = mapStop(reason);
        takeUsage(event.usage);
        return [];
      }
      case 'message_stop': {
        finished = true;
        // A tool_use block the server never closed is still the model's call.
        const open = [...blocks.entries()].sort(([a], [b]) => a - b);
        blocks.clear();
        return open.flatMap(([, block]) => (block.type === 'tool_use' ? [toolCallOf(block)] : []));
      }
      case 'error': {
        const type = isObject(event.error) ? String(event.error.type ?? '') : '';
        return [
          fail('http', `${url} reported an error mid-stream: ${errorText(event.error)}`, {
            // Transient by type, but never once output was seen: the caller cannot start over silently.
            retryable: RETRYABLE_ERROR_TYPES.has(type) && !afterOutput,
          }),
        ];
      }
      default:
        // ping, and event types added after this was written.
        return [];
    }
  };

  const ended = yield* readEventStream(opened.body, {
    url,
    signal: req.signal,
    interpret,
    finished: () => finished,
    afterOutput: () => afterOutput,
    unit: 'stream event',
  });
  if (ended) return;
  if (!finished) {
    yield fail('protocol', `${url} ended the stream before it finished the reply`);
    return;
  }
  if (usage.seen) {
    yield {
      type: 'usage',
      inputTokens: usage.input + usage.cacheWrite + usage.cacheRead,
      outputTokens: usage.output,
    };
  }
  const reason = stopReason ?? 'stop';
  yield { type: 'done', stopReason: calledTools && reason === 'stop' ? 'tool_calls' : reason };
}

interface WireUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

interface WireEvent {
  type?: string;
  index?: unknown;
  message?: { usage?: unknown };
  content_block?: unknown;
  delta?: { type?: string; text?: unknown; partial_json?: unknown; stop_reason?: unknown } | null;
  usage?: unknown;
  error?: unknown;
}

function indexOf(event: WireEvent): number {
  if (typeof event.index !== 'number') throw new Error(`${event.type} without a block index`);
  return event.index;
}

function mapStop(reason: string): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    default:
      // refusal, pause_turn and reasons added later.
      return 'other';
  }
}
