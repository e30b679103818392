// The loop's types live in turn-types.ts, so the parts of a step import them without a cycle.
import { withImageData } from '../attachments/images.ts';
import type { Delivery } from '../channel/port.ts';
import { type Route, streamRoute } from '../gateway/router.ts';
import type { ChatMessage, ToolCall } from '../gateway/types.ts';
import { recordDelivery } from '../store/delivery-ledger.ts';
import type { SessionLog } from '../store/session-log.ts';
import { FINISH_NOW, REPEAT_STOP, stepDirective, trailingRepeats } from './ceilings.ts';
import { compactIfNeeded } from './compaction.ts';
import { effortAfter } from './effort.ts';
import { routeFor } from './sensitive.ts';
import { rebuildConversation, type SessionEventData } from './session-events.ts';
import { systemPrompt } from './system-prompt.ts';
import { offeredTools } from './tool-offer.ts';
import { settleOpenCalls } from './tool-step.ts';
import { type TurnState, turnState, uniqueCallIds } from './turn-state.ts';
import type { LoopDeps, TurnContext, TurnLog, TurnStatus } from './turn-types.ts';

export type { LoopDeps, TurnContext, TurnLog, TurnStatus };

const RESEARCH_COERCION =
  'This is a research question. Before answering, gather evidence with the tools you have, then answer from what you found.';

/**
 * The one think-act loop. It reads where the turn stands from the log, does the next thing, and
 * writes what it did before acting on it, so it can stop anywhere (a question for the owner, a
 * crash) and carry on later from the log alone.
 */
export async function driveTurn(deps: LoopDeps, turn: TurnContext): Promise<TurnStatus> {
  await turn.sink(
    turn.recovered
      ? { type: 'turn_started', turnId: turn.turnId, recovered: true }
      : { type: 'turn_started', turnId: turn.turnId },
  );
  const status = await runTurn(deps, turn);
  await turn.sink({ type: 'turn_ended', turnId: turn.turnId, status });
  return status;
}

async function runTurn(deps: LoopDeps, turn: TurnContext): Promise<TurnStatus> {
  // Read once; afterwards this loop is the only writer of the turn, so its appends keep it current.
  const log = await openTurnLog(deps.sessions, turn.session.id, turn.turnId);
  await compactIfNeeded(deps, log, deps.limits.compaction);
  for (;;) {
    if (turn.signal.aborted) return 'interrupted';
    const state = turnState(log.events, turn.turnId);
    if (state.ended) return 'ended';
    // An answer in the log ends the turn, whether it was just written or a restart cut it off.
    if (state.answered) {
      if (!needsEvidence(state)) return finish(deps, turn, log, state.lastText, state.steps.length);
      await log.append({ kind: 'harness_note', text: RESEARCH_COERCION });
      continue;
    }
    if (state.openCalls.length === 0) {
      const status = await modelStep(deps, turn, log, state);
      if (status) return status;
      continue;
    }
    const step = await settleOpenCalls(deps, turn, log, state.openCalls, state);
    if (step !== 'done') return step;
  }
}

/** One model step, written to the log; a status only when the turn stops here (a failure or a stop). */
async function modelStep(
  deps: LoopDeps,
  turn: TurnContext,
  log: TurnLog,
  state: TurnState,
): Promise<TurnStatus | undefined> {
  const stop = await deps.stepGuard?.();
  if (stop !== undefined) return failed(deps, turn, log, deps.route.name, stop, '');
  const step = state.steps.length + 1;
  const repeats = trailingRepeats(state.steps);
  const directive = stepDirective(step, repeats, deps.limits);
  // Outside servers still starting get a bounded wait, so their tools are in this request.
  await deps.outside?.ready(turn.signal);
  const messages: ChatMessage[] = [
    { role: 'system', content: systemPrompt(deps.now(), deps.skillIndex, deps.outside?.indexLines()) },
    ...(await withImageData(rebuildConversation(log.events), deps.outputs, turn.session.id)),
  ];
  if (directive === 'warn') messages.push({ role: 'system', content: FINISH_NOW });
  if (directive === 'final' && repeats >= deps.limits.maxRepeats)
    messages.push({ role: 'system', content: REPEAT_STOP });
  const route = routeFor(deps, log.events);
  const tools =
    directive === 'final' ? undefined : offeredTools(deps.tools.specs(), deps.outside, log.events);
  const { text, calls, failure, model } = await consume(deps, turn, route, step, {
    messages,
    tools,
    effort: effortAfter(state.lastOutcome),
    signal: turn.signal,
  });
  // A stop is not a model failure: nothing of the step is written, and the next start asks again.
  if (turn.signal.aborted) return 'interrupted';
  if (failure !== undefined) return failed(deps, turn, log, route.name, failure, text);

  // On the final step no tools were offered; a model that calls one anyway is not obeyed.
  const toolCalls = directive === 'final' ? [] : uniqueCallIds(calls, log.events);
  await log.append(
    toolCalls.length > 0
      ? { kind: 'assistant_message', text, toolCalls, model, route: route.name }
      : { kind: 'assistant_message', text, model, route: route.name },
  );
  return undefined;
}

/** A research turn that answered without evidence is told once to gather some. */
function needsEvidence(state: TurnState): boolean {
  // Loading a skill is not evidence; any other tool call is.
  const usedTools = state.steps.some((s) => s.some((c) => c.name !== 'load_skill'));
  return state.research && !usedTools && !state.coerced;
}

/**
 * The reply goes out before the turn is marked ended: a crash while it is on its way leaves the
 * turn open, and the next start sends it again from the log (at least once, never lost). What the
 * channel said about it (the platform's ids, or that it did not arrive) goes into the delivery
 * ledger in the same transaction as `turn_ended`; a failed reply is posted to the owner once the
 * channel is back (late-replies.ts). A reply the channel refuses still ends the turn; the refusal
 * goes to the caller.
 */
async function finish(
  deps: LoopDeps,
  turn: TurnContext,
  log: TurnLog,
  text: string,
  step: number,
): Promise<TurnStatus> {
  let delivery: Delivery = { delivered: false, messageIds: [] };
  let error: string | undefined;
  try {
    delivery = (await turn.sink({ type: 'reply', text, step })) ?? { delivered: true, messageIds: [] };
  } catch (thrown) {
    error = (thrown as Error).message;
    throw thrown;
  } finally {
    const { session, turnId } = turn;
    const ended: SessionEventData = { kind: 'turn_ended', outcome: 'answered' };
    const id = await deps.db.transaction(async (tx) => {
      await recordDelivery(tx, {
        kind: turn.unattended ? 'digest' : 'reply',
        channel: session.channel,
        room: session.room,
        sessionId: session.id,
        turnId,
        delivered: delivery.delivered,
        messageIds: delivery.messageIds,
        error: error ?? null,
        body: text,
      });
      return deps.sessions.append(session.id, ended, turnId, tx);
    });
    log.adopt({ id, data: ended });
    if (!delivery.delivered)
      deps.log.warn(
        { sessionId: session.id },
        `the reply was not delivered: ${error ?? 'the channel said so'}`,
      );
  }
  return 'answered';
}

/** Streams one model call to the sink and gathers what it said. */
async function consume(
  deps: LoopDeps,
  turn: TurnContext,
  route: Route,
  step: number,
  request: Parameters<typeof streamRoute>[1],
): Promise<{ text: string; calls: ToolCall[]; failure?: string; model: string }> {
  let text = '';
  const calls: ToolCall[] = [];
  let failure: string | undefined;
  let model = route.entries[0]?.model ?? '';
  for await (const event of streamRoute(route, request, deps.router)) {
    if (event.type === 'model') model = event.entry.model;
    else if (event.type === 'text_delta') {
      text += event.text;
      await turn.sink({ type: 'text_delta', text: event.text, step });
    } else if (event.type === 'tool_call') calls.push(event.call);
    else if (event.type === 'error') failure = event.message;
  }
  return failure === undefined ? { text, calls, model } : { text, calls, failure, model };
}

async function failed(
  deps: LoopDeps,
  turn: TurnContext,
  log: TurnLog,
  routeName: string,
  failure: string,
  text: string,
): Promise<TurnStatus> {
  await log.append({ kind: 'model_error', message: failure, route: routeName });
  await log.append({ kind: 'turn_ended', outcome: 'failed' });
  deps.log.warn({ sessionId: turn.session.id, route: routeName }, `model call failed: ${failure}`);
  await turn.sink({
    type: 'notice',
    level: 'error',
    text: `model: ${failure}${text ? ' (the reply above was cut off)' : ''}; your message is kept, so send another when the model is back`,
  });
  return 'failed';
}

async function openTurnLog(sessions: SessionLog, sessionId: string, turnId: string): Promise<TurnLog> {
  const events = await sessions.recent(sessionId);
  return {
    events,
    async append(data) {
      const id = await sessions.append(sessionId, data, turnId);
      events.push({ id, sessionId, turnId, data, createdAt: new Date() });
    },
    adopt({ id, data }) {
      events.push({ id, sessionId, turnId, data, createdAt: new Date() });
    },
  };
}
