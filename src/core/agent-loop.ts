import type { ReplySink } from '../channel/port.ts';
import { type Route, type RouterDeps, streamRoute } from '../gateway/router.ts';
import type { ChatMessage, ToolCall } from '../gateway/types.ts';
import type { Logger } from '../log.ts';
import { dangerLevel, type PermissionGate, type Verdict } from '../permissions/gate.ts';
import { recordAudit } from '../store/audit-log.ts';
import type { Db } from '../store/db.ts';
import type { PermissionRequests } from '../store/permission-requests.ts';
import type { Session, SessionLog } from '../store/session-log.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { runTool, type ToolOutcome } from '../tools/run-tool.ts';
import { type Ceilings, FINISH_NOW, REPEAT_STOP, stepDirective, trailingRepeats } from './ceilings.ts';
import { effortAfter } from './effort.ts';
import { rebuildConversation, type SessionEvent, type SessionEventData } from './session-events.ts';
import { systemPrompt } from './system-prompt.ts';
import { turnState } from './turn-state.ts';

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
      { role: 'system', content: systemPrompt(deps.now()) },
      ...rebuildConversation(events),
    ];
    if (directive === 'warn') messages.push({ role: 'system', content: FINISH_NOW });
    if (directive === 'final' && repeats >= deps.ceilings.maxRepeats)
      messages.push({ role: 'system', content: REPEAT_STOP });

    let text = '';
    const calls: ToolCall[] = [];
    let failure: string | undefined;
    let model = deps.route.entries[0]?.model ?? '';
    const stream = streamRoute(
      deps.route,
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
      await log.append({ kind: 'model_error', message: failure, route: deps.route.name });
      await log.append({ kind: 'turn_ended', outcome: 'failed' });
      deps.log.warn({ sessionId: session.id, route: deps.route.name }, `model call failed: ${failure}`);
      await turn.sink({
        type: 'notice',
        level: 'error',
        text: `model: ${failure}${text ? ' (the reply above was cut off)' : ''}; your message is kept, so send another when the model is back`,
      });
      return 'failed';
    }

    // On the final step no tools were offered; a model that calls one anyway is not obeyed.
    const toolCalls = directive === 'final' ? [] : calls;
    await log.append(
      toolCalls.length > 0
        ? { kind: 'assistant_message', text, toolCalls, model, route: deps.route.name }
        : { kind: 'assistant_message', text, model, route: deps.route.name },
    );
    if (toolCalls.length > 0) continue;

    const usedTools = state.steps.some((s) => s.length > 0);
    if (state.research && !usedTools && !state.coerced) {
      await log.append({ kind: 'harness_note', text: RESEARCH_COERCION });
      continue;
    }
    await log.append({ kind: 'turn_ended', outcome: 'answered' });
    await turn.sink({ type: 'reply', text });
    return 'answered';
  }
}

interface TurnLog {
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

interface Ready {
  call: ToolCall;
  run?: {
    tool: NonNullable<ReturnType<ToolRegistry['get']>>;
    args: Record<string, unknown>;
    verdict: Verdict;
  };
  result?: ToolOutcome & { verdict?: Verdict; decision?: string };
}

/**
 * Decides every open call of the step: corrections for bad arguments, denials, approvals, and new
 * questions for the owner. Returns true when the turn must wait for the owner. Only when nothing is
 * pending do the approved calls run (up to `parallel` at once); results are logged in call order.
 */
async function settleOpenCalls(
  deps: LoopDeps,
  turn: TurnContext,
  log: TurnLog,
  open: ToolCall[],
  state: ReturnType<typeof turnState>,
): Promise<boolean> {
  const { session, turnId } = turn;
  const ready: Ready[] = [];
  let waiting = false;
  for (const call of open) {
    if (state.started.has(call.id)) {
      // Started before a crash and never finished: running it again could repeat a side effect.
      ready.push({
        call,
        result: {
          ok: false,
          content: `${call.name} was interrupted by a restart and was not run again; check whether it took effect before retrying.`,
        },
      });
      continue;
    }
    const prepared = deps.tools.prepare(call);
    if (!prepared.ok) {
      ready.push({ call, result: { ok: false, content: prepared.correction } });
      continue;
    }
    const requestId = state.requests.get(call.id);
    if (requestId) {
      const decision = state.decisions.get(call.id) ?? (await expiredDecision(deps, log, requestId));
      if (decision === undefined) {
        waiting = true;
        continue;
      }
      const request = await deps.requests.find(requestId);
      const verdict: Verdict = {
        verdict: 'ask',
        layer: request?.layer ?? 'default',
        score: request?.score ?? 3,
        rationale: request?.rationale ?? '',
      };
      if (decision === 'once' || decision === 'session') {
        // Exactly what the owner was shown runs: the stored arguments, not a fresh parse.
        ready.push({ call, run: { tool: prepared.tool, args: request?.args ?? prepared.args, verdict } });
      } else {
        const why = decision === 'timeout' ? 'the owner did not answer in time' : 'the owner denied it';
        ready.push({
          call,
          result: {
            ok: false,
            content: `Not run: ${why}. Do not retry the same call; ask the owner or take another way.`,
            verdict,
            decision,
          },
        });
      }
      continue;
    }
    const verdict = await deps.gate.judge({ sessionId: session.id, tool: call.name, args: prepared.args });
    if (verdict.verdict === 'allow') {
      ready.push({ call, run: { tool: prepared.tool, args: prepared.args, verdict } });
    } else if (verdict.verdict === 'deny') {
      ready.push({
        call,
        result: {
          ok: false,
          content: `Refused by policy (${verdict.layer}): ${verdict.rationale}.`,
          verdict,
        },
      });
    } else if (turn.unattended) {
      ready.push({
        call,
        result: {
          ok: false,
          content: `Not run: nobody is there to approve ${call.name} (${verdict.rationale}). Rewrite the call so it only reads, or leave it out and report what you would have done.`,
          verdict,
          decision: 'auto_deny',
        },
      });
    } else {
      await askOwner(deps, turn, log, call, prepared.args, verdict);
      waiting = true;
    }
  }
  if (waiting) return true;

  const outcomes = await runInBatches(deps, turn, log, ready);
  for (const [index, item] of ready.entries()) {
    const outcome = outcomes[index] as ToolOutcome & { durationMs: number };
    await log.append({
      kind: 'tool_result',
      callId: item.call.id,
      tool: item.call.name,
      content: outcome.content,
      isError: !outcome.ok,
    });
    const verdict = item.run?.verdict ?? item.result?.verdict;
    await recordAudit(deps.db, {
      sessionId: session.id,
      turnId,
      callId: item.call.id,
      tool: item.call.name,
      args: item.call.arguments,
      layer: verdict?.layer ?? 'constraint',
      verdict: verdict?.verdict ?? 'deny',
      score: verdict?.score ?? null,
      decision: state.decisions.get(item.call.id) ?? item.result?.decision ?? null,
      outcome: item.run ? (outcome.ok ? 'ok' : 'error') : 'not_run',
      durationMs: outcome.durationMs,
    });
  }
  return false;
}

async function runInBatches(deps: LoopDeps, turn: TurnContext, log: TurnLog, ready: Ready[]) {
  const outcomes: Array<ToolOutcome & { durationMs: number }> = [];
  const queue = ready.map((item, index) => ({ item, index }));
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const { item, index } = next;
      if (!item.run) {
        outcomes[index] = { ...(item.result as ToolOutcome), durationMs: 0 };
        continue;
      }
      await log.append({ kind: 'tool_started', callId: item.call.id, tool: item.call.name });
      await turn.sink({
        type: 'tool_started',
        callId: item.call.id,
        tool: item.call.name,
        args: item.call.arguments,
      });
      const started = performance.now();
      const outcome = await runTool(
        item.run.tool,
        item.run.args,
        {
          signal: turn.signal ?? new AbortController().signal,
          sessionId: turn.session.id,
          workspace: deps.workspace,
          log: deps.log,
          now: deps.now,
        },
        item.run.tool.timeoutMs ?? deps.toolTimeoutMs,
      );
      const durationMs = Math.round(performance.now() - started);
      outcomes[index] = { ...outcome, durationMs };
      await turn.sink({
        type: 'tool_finished',
        callId: item.call.id,
        tool: item.call.name,
        ok: outcome.ok,
        durationMs,
      });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(deps.parallel, ready.length)) }, worker));
  return outcomes;
}

async function askOwner(
  deps: LoopDeps,
  turn: TurnContext,
  log: TurnLog,
  call: ToolCall,
  args: Record<string, unknown>,
  verdict: Verdict,
) {
  const canonical = JSON.stringify(args);
  const request = await deps.requests.create(
    {
      sessionId: turn.session.id,
      turnId: turn.turnId,
      callId: call.id,
      tool: call.name,
      args,
      canonical,
      score: verdict.score,
      layer: verdict.layer,
      rationale: verdict.rationale,
    },
    deps.permissionTtlMs,
    deps.now(),
  );
  await log.append({
    kind: 'permission_requested',
    callId: call.id,
    requestId: request.id,
    tool: call.name,
    score: verdict.score,
    layer: verdict.layer,
    rationale: verdict.rationale,
  });
  await turn.sink({
    type: 'permission_prompt',
    prompt: {
      requestId: request.id,
      tool: call.name,
      args: canonical,
      score: verdict.score,
      level: dangerLevel(verdict.score),
      layer: verdict.layer,
      rationale: verdict.rationale,
    },
  });
}

/** A pending request past its deadline counts as denied by timeout; the decision is logged. */
async function expiredDecision(deps: LoopDeps, log: TurnLog, requestId: string): Promise<string | undefined> {
  const request = await deps.requests.find(requestId);
  if (!request) return 'deny';
  if (request.status !== 'pending') return request.decision ?? 'deny';
  if (request.expiresAt > deps.now()) return undefined;
  const settled = await deps.requests.settle(requestId, 'timeout', 'steward', deps.now(), true);
  if (settled.ok || settled.request) {
    await log.append({
      kind: 'permission_decision',
      callId: request.callId,
      requestId,
      decision: 'timeout',
      decidedBy: 'steward',
    });
  }
  return 'timeout';
}
