// The one vocabulary between the agent loop and every model provider.

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them: JSON text, parsed and validated by the loop. */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; images?: ImageInput[] }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; callId: string; content: string };

/**
 * An image for a vision model. `ref` names where the core stored it; `data` (base64) is filled in
 * just before a request, and a provider sends only images that have it.
 */
export interface ImageInput {
  ref: string;
  mime: string;
  data?: string;
}

export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export type Effort = 'low' | 'normal';

export interface ModelRequest {
  model: string;
  messages: ChatMessage[];
  /** Absent or empty: the request carries no tool schemas at all. */
  tools?: ToolSpec[];
  effort?: Effort;
  signal?: AbortSignal;
}

export type StopReason = 'stop' | 'tool_calls' | 'length' | 'other';

export type ProviderErrorKind = 'unreachable' | 'http' | 'timeout' | 'protocol' | 'aborted';

/**
 * A provider's stream. Once iteration has begun nothing is thrown: failures arrive as an `error`
 * event, and every stream ends with exactly one `done` or `error`.
 */
export type ProviderEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'usage'; inputTokens: number; outputTokens: number }
  | { type: 'done'; stopReason: StopReason }
  | {
      type: 'error';
      kind: ProviderErrorKind;
      message: string;
      status?: number;
      /** Worth retrying (connection failures, 429, 5xx) when no output has been seen yet. */
      retryable: boolean;
      /** True once any text or tool call was emitted: the caller must not silently switch models. */
      afterOutput: boolean;
    };

export interface Provider {
  /** A short name for logs and the usage ledger, e.g. "openai-compatible". */
  readonly kind: string;
  stream(request: ModelRequest): AsyncIterable<ProviderEvent>;
}
