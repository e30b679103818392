// The Anthropic Messages request body: system text on top, strictly alternating user and assistant
// turns, tool results as user-turn blocks, and the thinking budget that stands for effort.

import type { AnthropicOptions } from './anthropic.ts';

const DEFAULT_MAX_TOKENS = 4096;

import type { ChatMessage, ModelRequest, ToolCall } from './types.ts';

type WireBlock = Record<string, unknown>;
interface WireMessage {
  role: 'user' | 'assistant';
  content: WireBlock[];
}

export function wireBody(req: ModelRequest, options: AnthropicOptions): Record<string, unknown> {
  const system = req.messages.flatMap((m) => (m.role === 'system' && m.content !== '' ? [m.content] : []));
  const messages = wireMessages(req.messages);
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  const body: Record<string, unknown> = { model: req.model, max_tokens: maxTokens, stream: true };
  if (system.length > 0) body.system = system.join('\n\n');
  body.messages = messages.map((m) => ({ role: m.role, content: compact(m.content) }));
  // A step without tools sends no `tools` field at all, not an empty list.
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.inputSchema,
    }));
  }
  const budget = thinkingBudget(req, options, messages);
  if (budget > 0) {
    body.thinking = { type: 'enabled', budget_tokens: budget };
    // max_tokens counts thinking too and must exceed the budget: the reply keeps its own room.
    body.max_tokens = maxTokens + budget;
  }
  return body;
}

/**
 * Effort → extended thinking, only when `thinkingBudget` is configured: 'normal' (the default) thinks
 * with the normal budget, 'low' with the low budget if it is above 0 and otherwise not at all.
 * Thinking stays off while a tool loop is open (the last assistant message called tools): ChatMessage
 * keeps no signed thinking blocks, and the API rejects a thinking request whose open turn lacks them.
 */
function thinkingBudget(req: ModelRequest, options: AnthropicOptions, messages: WireMessage[]): number {
  if (!options.thinkingBudget) return 0;
  const lastAssistant = messages.findLast((m) => m.role === 'assistant');
  if (lastAssistant?.content.some((b) => b.type === 'tool_use')) return 0;
  const budget = req.effort === 'low' ? options.thinkingBudget.low : options.thinkingBudget.normal;
  return Math.max(budget, 0);
}

/**
 * The conversation as strictly alternating user/assistant messages: tool results become tool_result
 * blocks in a user message, and neighbours of the same role merge into one message.
 */
function wireMessages(messages: ChatMessage[]): WireMessage[] {
  const out: WireMessage[] = [];
  for (const message of messages) {
    const wire = wireMessage(message);
    if (!wire || wire.content.length === 0) continue;
    const last = out.at(-1);
    if (last?.role === wire.role) last.content.push(...wire.content);
    else out.push(wire);
  }
  for (const message of out) {
    // The API wants a user message's tool_result blocks before any text.
    if (message.role === 'user') {
      message.content = [
        ...message.content.filter((b) => b.type === 'tool_result'),
        ...message.content.filter((b) => b.type !== 'tool_result'),
      ];
    }
  }
  return out;
}

function wireMessage(message: ChatMessage): WireMessage | undefined {
  switch (message.role) {
    case 'system':
      return undefined;
    case 'user':
      return {
        role: 'user',
        content: [
          ...textBlocks(message.content),
          ...(message.images ?? []).flatMap((i) =>
            i.data === undefined
              ? []
              : [{ type: 'image', source: { type: 'base64', media_type: i.mime, data: i.data } }],
          ),
        ],
      };
    case 'tool':
      return {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: message.callId, content: message.content }],
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: [
          ...textBlocks(message.content),
          ...(message.toolCalls ?? []).map((call) => ({
            type: 'tool_use',
            id: call.id,
            name: call.name,
            input: toolInput(call),
          })),
        ],
      };
  }
}

/** The API rejects empty text blocks, so empty text is no block at all. */
const textBlocks = (text: string): WireBlock[] => (text === '' ? [] : [{ type: 'text', text }]);

/** A message that is only text goes as a plain string, the API's short form. */
function compact(content: WireBlock[]): string | WireBlock[] {
  const [only] = content;
  return content.length === 1 && only?.type === 'text' ? (only.text as string) : content;
}

/** The parsed arguments; text that is not a JSON object (the model wrote it broken) becomes {}. */
function toolInput(call: ToolCall): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(call.arguments);
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
