// One tool step, in three stages that read top to bottom: plan what each open call needs, ask or
// run, then record every result in call order with its audit row.
import type { ToolCall } from '../gateway/types.ts';
import { dangerLevel } from '../permissions/gate.ts';
import { recordAudit } from '../store/audit-log.ts';
import { type CallPlan, planCall } from './call-plan.ts';
import { egressContext } from './egress-context.ts';
import { type Ran, runCalls } from './run-calls.ts';
import type { TurnState } from './turn-state.ts';
import type { LoopDeps, TurnContext, TurnLog } from './turn-types.ts';

export type StepEnd = 'done' | 'parked' | 'interrupted';

/**
 * Settles every open call of the step. The turn parks while any question is open (nothing of the
 * step runs until every one is answered); otherwise the ready calls run and their results are
 * logged in call order.
 */
export async function settleOpenCalls(
  deps: LoopDeps,
  turn: TurnContext,
  log: TurnLog,
  open: ToolCall[],
  state: TurnState,
): Promise<StepEnd> {
  const plans: CallPlan[] = [];
  // What the session's log says about egress, read once for the step's calls.
  const egress = egressContext(log.events);
  for (const call of open) plans.push(await planCall(deps, turn, log, state, call, egress));

  let parked = false;
  for (const plan of plans) {
    if (plan.kind === 'wait') parked = true;
    if (plan.kind === 'ask') {
      await askOwner(deps, turn, log, plan);
      parked = true;
    }
  }
  if (parked) return 'parked';

  const outcomes = await runCalls(deps, turn, log, plans);
  if (turn.signal.aborted) return 'interrupted';
  for (const [index, plan] of plans.entries()) await record(deps, turn, log, plan, outcomes[index] as Ran);
  return 'done';
}

async function askOwner(
  deps: LoopDeps,
  turn: TurnContext,
  log: TurnLog,
  plan: Extract<CallPlan, { kind: 'ask' }>,
): Promise<void> {
  const { call, args, verdict } = plan;
  const { request, event } = await deps.approvals.ask({
    sessionId: turn.session.id,
    turnId: turn.turnId,
    call,
    args,
    verdict,
  });
  log.adopt(event);
  await turn.sink({
    type: 'permission_prompt',
    prompt: {
      requestId: request.id,
      tool: call.name,
      args: request.canonical,
      score: verdict.score,
      level: dangerLevel(verdict.score),
      layer: verdict.layer,
      rationale: verdict.rationale,
    },
  });
}

/** The result for the model, then one audit row naming the digest of what actually ran. */
async function record(
  deps: LoopDeps,
  turn: TurnContext,
  log: TurnLog,
  plan: CallPlan,
  ran: Ran,
): Promise<void> {
  const { call } = plan;
  await log.append({
    kind: 'tool_result',
    callId: call.id,
    tool: call.name,
    content: ran.content,
    isError: !ran.ok,
    ...(ran.fenced ? { untrusted: true } : {}),
  });
  const verdict = plan.kind === 'run' || plan.kind === 'result' ? plan.verdict : undefined;
  const decision = plan.kind === 'run' || plan.kind === 'result' ? plan.decision : undefined;
  const ranWhat =
    plan.kind === 'run'
      ? typeof plan.args.command === 'string'
        ? plan.args.command
        : JSON.stringify(plan.args)
      : call.arguments;
  await recordAudit(deps.db, {
    sessionId: turn.session.id,
    turnId: turn.turnId,
    callId: call.id,
    tool: call.name,
    args: ranWhat,
    layer: verdict?.layer ?? 'constraint',
    verdict: verdict?.verdict ?? 'deny',
    score: verdict?.score ?? null,
    decision: decision ?? null,
    outcome: plan.kind === 'run' ? (ran.ok ? 'ok' : 'error') : 'not_run',
    durationMs: ran.durationMs,
  });
}
