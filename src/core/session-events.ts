import type { ChatMessage, ToolCall } from '../gateway/types.ts';
import type { Decision, Layer } from '../permissions/vocabulary.ts';

/**
 * Everything that happens in a session, as appended to `session_events` before it is acted on.
 * The conversation the model sees is rebuilt from these alone.
 */
export type SessionEventData =
  | { kind: 'user_message'; text: string; sender: string; research?: boolean; inboundId?: string }
  | { kind: 'assistant_message'; text: string; toolCalls?: ToolCall[]; model: string; route: string }
  /** Written just before a tool runs: a call started but never finished was cut off by a crash. */
  | { kind: 'tool_started'; callId: string; tool: string; sensitive?: boolean }
  /** `untrusted`: the content was fenced (an outsider may have written it); it taints the session. */
  | {
      kind: 'tool_result';
      callId: string;
      tool: string;
      content: string;
      isError: boolean;
      untrusted?: boolean;
    }
  /**
   * Written in the same transaction as the request row (src/core/approvals.ts). It carries what
   * the owner is shown and what runs if approved, so the loop reads decisions from the log alone.
   * Events written before these fields existed lack `args`, `canonical` and `expiresAt`.
   */
  | {
      kind: 'permission_requested';
      callId: string;
      requestId: string;
      tool: string;
      score: number;
      layer: Layer;
      rationale: string;
      args?: Record<string, unknown>;
      canonical?: string;
      /** ISO time after which an unanswered request counts as a timeout. */
      expiresAt?: string;
    }
  | { kind: 'permission_decision'; callId: string; requestId: string; decision: Decision; decidedBy: string }
  | { kind: 'model_error'; message: string; route: string }
  /** The harness speaking to the model (e.g. the one research coercion); replayed as a user turn. */
  | { kind: 'harness_note'; text: string }
  | { kind: 'turn_ended'; outcome: 'answered' | 'failed' | 'superseded' }
  /** Everything up to `throughEventId` is replaced, for the model, by `summary`; the events stay. */
  | { kind: 'compaction'; throughEventId: number; summary: string; turns: number };

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
  let compacted: Extract<SessionEventData, { kind: 'compaction' }> | undefined;
  for (const { data } of events) if (data.kind === 'compaction') compacted = data;
  if (compacted) {
    messages.push({
      role: 'user',
      content: `[steward] Summary of the earlier conversation:\n${compacted.summary}`,
    });
  }
  for (const { id, data } of events) {
    if (compacted && id <= compacted.throughEventId) continue;
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
      case 'harness_note':
        messages.push({ role: 'user', content: `[steward] ${data.text}` });
        break;
      default:
        // Calls, decisions and errors are the harness's record; the model sees their results.
        break;
    }
  }
  return messages;
}
