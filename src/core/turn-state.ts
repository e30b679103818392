import { randomUUID } from 'node:crypto';
import type { ToolCall } from '../gateway/types.ts';
import { approves, type Decision } from '../permissions/vocabulary.ts';
import type { StepOutcome } from './effort.ts';
import type { SessionEvent, SessionEventData } from './session-events.ts';

export type AskedEvent = Extract<SessionEventData, { kind: 'permission_requested' }>;

/** Where a turn stands, derived from the log alone, so a turn resumes the same after a restart. */
export interface TurnState {
  ended: boolean;
  research: boolean;
  /** The tool calls of each model step of this turn, in order. */
  steps: ToolCall[][];
  /** Calls of the latest step that have no result yet. */
  openCalls: ToolCall[];
  /**
   * Call ids of the latest step that were started, asked about (call id to request id) and decided
   * (call id to decision). Scoped to the latest step because call ids need not be unique across
   * steps: a provider that sends none numbers them `call_0`, `call_1`, … afresh each step.
   */
  started: ReadonlySet<string>;
  requests: ReadonlyMap<string, string>;
  /** Call id to the question as it was logged: what the owner was shown and its deadline. */
  asked: ReadonlyMap<string, AskedEvent>;
  decisions: ReadonlyMap<string, Decision>;
  /** What happened last, for effort dialing. */
  lastOutcome: StepOutcome;
  coerced: boolean;
  /** The text of the latest model step. */
  lastText: string;
  /**
   * The latest event of the turn is a model step without tool calls: its answer is in the log, so
   * a turn cut off before it ended is finished with it, never by asking the model again.
   */
  answered: boolean;
}

export function turnState(events: readonly SessionEvent[], turnId: string): TurnState {
  const steps: ToolCall[][] = [];
  const results = new Map<string, boolean>();
  const started = new Set<string>();
  const requests = new Map<string, string>();
  const asked = new Map<string, AskedEvent>();
  const decisions = new Map<string, Decision>();
  let ended = false;
  let research = false;
  let coerced = false;
  let lastText = '';
  let lastOutcome: StepOutcome = 'user_message';
  let answered = false;
  for (const { turnId: id, data } of events) {
    // A compaction is written under the turn that triggered it, but it is the harness's record,
    // not a step: a turn whose answer is logged stays answered when it compacts on resuming.
    if (id !== turnId || data.kind === 'compaction') continue;
    answered = data.kind === 'assistant_message' && !data.toolCalls?.length;
    switch (data.kind) {
      case 'user_message':
        research = data.research === true;
        lastOutcome = 'user_message';
        break;
      case 'assistant_message':
        steps.push(data.toolCalls ?? []);
        // Loading the research-brief skill makes this a research turn, as the /research prefix does.
        if (data.toolCalls?.some((c) => c.name === 'load_skill' && /"research-brief"/.test(c.arguments))) {
          research = true;
        }
        lastText = data.text;
        // What follows belongs to this step's calls; ids of earlier steps may be reused.
        results.clear();
        started.clear();
        requests.clear();
        asked.clear();
        decisions.clear();
        break;
      case 'tool_started':
        started.add(data.callId);
        break;
      case 'tool_result':
        results.set(data.callId, data.isError);
        break;
      case 'permission_requested':
        requests.set(data.callId, data.requestId);
        asked.set(data.callId, data);
        break;
      case 'permission_decision':
        decisions.set(data.callId, data.decision);
        break;
      case 'harness_note':
        coerced = true;
        break;
      case 'turn_ended':
        ended = true;
        break;
      default:
        break;
    }
  }
  const latest = steps.at(-1) ?? [];
  const openCalls = latest.filter((c) => !results.has(c.id));
  if (latest.length > 0 && openCalls.length === 0) {
    const denied = latest.some((c) => {
      const d = decisions.get(c.id);
      return d !== undefined && !approves(d);
    });
    lastOutcome = denied ? 'denial' : latest.some((c) => results.get(c.id)) ? 'failure' : 'clean';
  }
  return {
    ended,
    research,
    steps,
    openCalls,
    started,
    requests,
    asked,
    decisions,
    lastOutcome,
    coerced,
    lastText,
    answered,
  };
}

/**
 * Call ids as the log keeps them: unique within what a turn reads (SessionLog.recent), which holds
 * every call the model is shown and the whole of the open turn. Some servers number calls afresh
 * each step (`call_0`), which would tie a new call to an old result or request; a repeated or
 * missing id gets a fresh one. The model sees the rewritten ids too, since the conversation is
 * rebuilt from the log. Questions are one per call of a turn (migration 0011), so an id reused
 * after a compaction cannot meet an older question.
 */
export function uniqueCallIds(
  calls: readonly ToolCall[],
  events: readonly SessionEvent[],
  freshId: () => string = () => `call_${randomUUID().slice(0, 12)}`,
): ToolCall[] {
  const seen = new Set<string>();
  for (const { data } of events) {
    if (data.kind === 'assistant_message') for (const c of data.toolCalls ?? []) seen.add(c.id);
  }
  return calls.map((call) => {
    let id = call.id;
    while (id === '' || seen.has(id)) id = freshId();
    seen.add(id);
    return id === call.id ? call : { ...call, id };
  });
}
