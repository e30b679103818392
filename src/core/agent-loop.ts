import type { ReplySink } from '../channel/port.ts';
import { type Route, type RouterDeps, streamRoute } from '../gateway/router.ts';
import type { ChatMessage, ToolCall } from '../gateway/types.ts';
import type { Logger } from '../log.ts';
import type { OutputStore } from '../offload/output-store.ts';
import type { PermissionGate } from '../permissions/gate.ts';

import type { Db } from '../store/db.ts';
import type { PermissionRequests } from '../store/permission-requests.ts';
import type { Session, SessionLog } from '../store/session-log.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { type Ceilings, FINISH_NOW, REPEAT_STOP, stepDirective, trailingRepeats } from './ceilings.ts';
import { compactIfNeeded } from './compaction.ts';
import { effortAfter } from './effort.ts';
import { routeFor } from './sensitive.ts';
import { rebuildConversation, type SessionEvent, type SessionEventData } from './session-events.ts';
import { systemPrompt } from './system-prompt.ts';
import { settleOpenCalls } from './tool-step.ts';
import { turnState, uniqueCallIds } from './turn-state.ts';

export interface LoopDeps {
  db: Db;
  sessions: SessionLog;
  requests: PermissionRequests;
  gate: PermissionGate;
  tools: ToolRegistry;
  route: Route;
  router: RouterDeps;
  log: Logger;
  now: () => Date;
  ceilings: Ceilings;
  /** Tool calls of one step that run at once. */
  parallel: number;
  workspace: string;
  permissionTtlMs: number;
  /** The limit for tools that set none of their own. */
  toolTimeoutMs: number;
  outputs: OutputStore;
  /** Results larger than this (bytes) are stored and replaced by a digest; per tool, or default. */
  offload: { defaultBytes: number; thresholdBytes: Readonly<Record<string, number>> };
  /** Where a session goes once it has touched private data; without it, sensitive tools are refused. */
  sensitiveRoute?: Route;
  /** One line per installed skill, for the system prompt. */
  skillIndex: string;
  /** Older turns are summarized when the context passes this budget. */
  compaction: { budgetTokens: number; keepTurns: number };
}

export interface TurnContext {
  session: Session;
  turnId: string;
  sink: ReplySink;
  /** No owner is there to ask (scheduled digests): "ask" becomes a denial with a rewrite hint. */
  unattended: boolean;
  signal?: AbortSignal;
}

export type TurnStatus = 'answered' | 'parked' | 'failed' | 'ended';

const RESEARCH_COERCION =
  'This is a research question. Before answering, gather evidence with the tools you have, then answer from what you found.';

/**
 * The one think-act loop. It reads where the turn stands from the log, does the next thing, and
 * writes what it did before acting on it, so it can stop anywhere (a question for the owner, a
 * crash) and carry on later from the log alone.
 */
export async function driveTurn(deps: LoopDeps, turn: TurnContext): Promise<TurnStatus> {
  const { session } = turn;
  // Read once; afterwards this loop is the only writer of the turn, so its appends keep it current.
  const log = await openTurnLog(deps.sessions, session.id, turn.turnId);
  await compactIfNeeded(deps, log, deps.compaction);
  for (;;) {
    const events = log.events;
    const state = turnState(events, turn.turnId);
    if (state.ended) return 'ended';

    if (state.openCalls.length > 0) {
      const parked = await settleOpenCalls(deps, turn, log, state.openCalls, state);
      if (parked) return 'parked';
      continue;
    }

    const step = state.steps.length + 1;
    const repeats = trailingRepeats(state.steps);
    const directive = stepDirective(step, repeats, deps.ceilings);
    const messages: ChatMessage[] = [
      { role: 'system', content: systemPrompt(deps.now(), deps.skillIndex) },
      ...rebuildConversation(events),
    ];
    if (directive === 'warn') messages.push({ role: 'system', content: FINISH_NOW });
    if (directive === 'final' && repeats >= deps.ceilings.maxRepeats)
      messages.push({ role: 'system', content: REPEAT_STOP });

    let text = '';
    const calls: ToolCall[] = [];
    let failure: string | undefined;
    const route = routeFor(deps, events);
    let model = route.entries[0]?.model ?? '';
    const stream = streamRoute(
      route,
      {
        messages,
        tools: directive === 'final' ? undefined : deps.tools.specs(),
        effort: effortAfter(state.lastOutcome),
        signal: turn.signal,
      },
      deps.router,
    );
    for await (const event of stream) {
      if (event.type === 'model') model = event.entry.model;
      else if (event.type === 'text_delta') {
        text += event.text;
        await turn.sink({ type: 'text_delta', text: event.text });
      } else if (event.type === 'tool_call') calls.push(event.call);
      else if (event.type === 'error') failure = event.message;
    }

    if (failure) {
      await log.append({ kind: 'model_error', message: failure, route: route.name });
      await log.append({ kind: 'turn_ended', outcome: 'failed' });
      deps.log.warn({ sessionId: session.id, route: route.name }, `model call failed: ${failure}`);
      await turn.sink({
        type: 'notice',
        level: 'error',
        text: `model: ${failure}${text ? ' (the reply above was cut off)' : ''}; your message is kept, so send another when the model is back`,
      });
      return 'failed';
    }

    // On the final step no tools were offered; a model that calls one anyway is not obeyed.
    const toolCalls = directive === 'final' ? [] : uniqueCallIds(calls, events);
    await log.append(
      toolCalls.length > 0
        ? { kind: 'assistant_message', text, toolCalls, model, route: route.name }
        : { kind: 'assistant_message', text, model, route: route.name },
    );
    if (toolCalls.length > 0) continue;

    // Loading a skill is not evidence; any other tool call is.
    const usedTools = state.steps.some((s) => s.some((c) => c.name !== 'load_skill'));
    if (state.research && !usedTools && !state.coerced) {
      await log.append({ kind: 'harness_note', text: RESEARCH_COERCION });
      continue;
    }
    await log.append({ kind: 'turn_ended', outcome: 'answered' });
    await turn.sink({ type: 'reply', text });
    return 'answered';
  }
}

export interface TurnLog {
  events: SessionEvent[];
  append(data: SessionEventData): Promise<void>;
}

async function openTurnLog(sessions: SessionLog, sessionId: string, turnId: string): Promise<TurnLog> {
  const events = await sessions.events(sessionId);
  return {
    events,
    async append(data) {
      const id = await sessions.append(sessionId, data, turnId);
      events.push({ id, sessionId, turnId, data, createdAt: new Date() });
    },
  };
}
