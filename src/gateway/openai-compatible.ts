import { openEventStream, readEventStream } from './event-stream.ts';
import { errorText } from './http-errors.ts';
import type { ChatMessage, ModelRequest, Provider, ProviderEvent, StopReason, ToolCall } from './types.ts';

export interface OpenAiCompatibleOptions {
  baseUrl: string;
  apiKey?: string;
  /** Send `reasoning_effort: "low"` when the loop asks for low effort (default true). */
  effortHint?: boolean;
}

export function openAiCompatible(options: OpenAiCompatibleOptions): Provider {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  return {
    kind: 'openai-compatible',
    // Without the hint, a low-effort request is sent as a normal one.
    stream: (req) =>
      streamCompletion(
        url,
        options.apiKey,
        options.effortHint === false ? { ...req, effort: 'normal' } : req,
      ),
  };
}

async function* streamCompletion(
  url: string,
  apiKey: string | undefined,
  req: ModelRequest,
): AsyncGenerator<ProviderEvent> {
  let afterOutput = false;
  const fail = (kind: Extract<ProviderEvent, { type: 'error' }>['kind'], message: string, extra = {}) =>
    ({ type: 'error', kind, message, retryable: false, afterOutput, ...extra }) as ProviderEvent;

  let body: string;
  try {
    body = JSON.stringify(wireBody(req));
  } catch (error) {
    // Deterministic: the same request would fail the same way on any retry or other model.
    yield fail('protocol', `cannot encode the request for ${url}: ${(error as Error).message ?? error}`);
    return;
  }

  const opened = await openEventStream(
    url,
    apiKey ? { authorization: `Bearer ${apiKey}` } : {},
    body,
    req.signal,
  );
  if ('error' in opened) {
    yield opened.error;
    return;
  }

  const calls = new Map<number, ToolCall>();
  let lastIndex: number | undefined;
  let stopReason: StopReason | undefined;
  let finished = false;

  /** The slot a tool-call delta belongs to. Servers that omit `index` are told apart by `id`. */
  const slotOf = (part: WireToolCall): number => {
    if (typeof part.index === 'number') return part.index;
    if (part.id) {
      for (const [index, call] of calls) if (call.id === part.id) return index;
      return calls.size === 0 ? 0 : Math.max(...calls.keys()) + 1;
    }
    return lastIndex ?? 0;
  };

  /** The events of one SSE payload. Throws on a chunk of the wrong shape. */
  const interpret = (payload: string): ProviderEvent[] => {
    if (payload.trim() === '[DONE]') {
      finished = true;
      return [];
    }
    let chunk: WireChunk;
    try {
      chunk = JSON.parse(payload) as WireChunk;
    } catch {
      return [fail('protocol', `${url} sent a stream chunk that is not JSON`)];
    }
    if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
      return [fail('protocol', `${url} sent a stream chunk that is not an object`)];
    }
    if (chunk.error) {
      return [fail('http', `${url} reported an error mid-stream: ${errorText(chunk.error)}`)];
    }
    const events: ProviderEvent[] = [];
    const choice = chunk.choices?.[0];
    const text = choice?.delta?.content;
    if (typeof text === 'string' && text !== '') {
      afterOutput = true;
      events.push({ type: 'text_delta', text });
    }
    for (const part of choice?.delta?.tool_calls ?? []) {
      const index = slotOf(part);
      const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
      calls.set(index, call);
      lastIndex = index;
    }
    if (choice?.finish_reason) stopReason = mapStop(choice.finish_reason);
    if (chunk.usage) {
      events.push({
        type: 'usage',
        inputTokens: chunk.usage.prompt_tokens ?? 0,
        outputTokens: chunk.usage.completion_tokens ?? 0,
      });
    }
    return events;
  };

  const ended = yield* readEventStream(opened.body, {
    url,
    signal: req.signal,
    interpret,
    finished: () => finished,
    afterOutput: () => afterOutput,
    unit: 'stream chunk',
  });
  if (ended) return;
  if (!finished && !stopReason) {
    yield fail('protocol', `${url} ended the stream before it finished the reply`);
    return;
  }
  const ordered = [...calls.entries()].sort(([a], [b]) => a - b);
  for (const [index, call] of ordered) {
    afterOutput = true;
    yield { type: 'tool_call', call: { ...call, id: call.id || `call_${index}` } };
  }
  yield { type: 'done', stopReason: ordered.length > 0 ? 'tool_calls' : (stopReason ?? 'stop') };
}

function wireBody(req: ModelRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: req.model,
    messages: req.messages.map(wireMessage),
    stream: true,
    stream_options: { include_usage: true },
  };
  // A step without tools sends no `tools` field at all, not an empty list.
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    }));
  }
  if (req.effort === 'low') body.reasoning_effort = 'low';
  return body;
}

function wireMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'tool':
      return { role: 'tool', tool_call_id: message.callId, content: message.content };
    case 'assistant':
      if (!message.toolCalls?.length) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content || null,
        tool_calls: message.toolCalls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        })),
      };
    case 'user': {
      const images = (message.images ?? []).filter((i) => i.data !== undefined);
      if (images.length === 0) return { role: 'user', content: message.content };
      return {
        role: 'user',
        content: [
          ...(message.content === '' ? [] : [{ type: 'text', text: message.content }]),
          ...images.map((i) => ({
            type: 'image_url',
            image_url: { url: `data:${i.mime};base64,${i.data}` },
          })),
        ],
      };
    }
    default:
      return { role: message.role, content: message.content };
  }
}

interface WireToolCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface WireChunk {
  error?: unknown;
  choices?: Array<{
    delta?: {
      content?: string | null;
      tool_calls?: WireToolCall[];
    };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

function mapStop(reason: string): StopReason {
  if (reason === 'stop' || reason === 'tool_calls' || reason === 'length') return reason;
  return reason === 'function_call' ? 'tool_calls' : 'other';
}
