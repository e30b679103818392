import type { ChatMessage, ToolCall } from '../gateway/types.ts';

/**
 * Everything that happens in a session, as appended to `session_events` before it is acted on.
 * The conversation the model sees is rebuilt from these alone.
 */
export type SessionEventData =
  | { kind: 'user_message'; text: string; sender: string }
  | { kind: 'assistant_message'; text: string; toolCalls?: ToolCall[]; model: string; route: string }
  | { kind: 'tool_call'; call: ToolCall }
  | { kind: 'tool_result'; callId: string; tool: string; content: string; isError: boolean }
  | { kind: 'permission_decision'; callId: string; requestId: string; decision: string; decidedBy: string }
  | { kind: 'model_error'; message: string; route: string };

export type SessionEventKind = SessionEventData['kind'];

export interface SessionEvent {
  id: number;
  sessionId: string;
  turnId: string | null;
  data: SessionEventData;
  createdAt: Date;
}

/** The messages a model is sent for this session, in order. A pure function of the log. */
export function rebuildConversation(events: readonly SessionEvent[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const { data } of events) {
    switch (data.kind) {
      case 'user_message':
        messages.push({ role: 'user', content: data.text });
        break;
      case 'assistant_message':
        messages.push(
          data.toolCalls?.length
            ? { role: 'assistant', content: data.text, toolCalls: data.toolCalls }
            : { role: 'assistant', content: data.text },
        );
        break;
      case 'tool_result':
        messages.push({ role: 'tool', callId: data.callId, content: data.content });
        break;
      default:
        // Calls, decisions and errors are the harness's record; the model sees their results.
        break;
    }
  }
  return messages;
}
