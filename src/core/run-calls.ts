// Stage two of a tool step: the calls that may run, at most `parallel` at once, each announced in
// the log before it starts. A stopped turn starts nothing new, and what it cut off stays without
// a result, so the next start reports it as interrupted instead of running it again.
import { runTool } from '../tools/run-tool.ts';
import type { CallPlan } from './call-plan.ts';
import { shapeResult } from './shape-result.ts';
import type { LoopDeps, TurnContext, TurnLog } from './turn-types.ts';

export interface Ran {
  ok: boolean;
  content: string;
  durationMs: number;
  /** The content was fenced as untrusted. */
  fenced?: boolean;
}

type Runnable = Extract<CallPlan, { kind: 'run' }>;

/** Outcomes in plan order; undefined for a call the stop cut off or never started. */
export async function runCalls(
  deps: LoopDeps,
  turn: TurnContext,
  log: TurnLog,
  plans: readonly CallPlan[],
): Promise<Array<Ran | undefined>> {
  const outcomes: Array<Ran | undefined> = plans.map((plan) =>
    plan.kind === 'result' ? { ok: false, content: plan.content, durationMs: 0 } : undefined,
  );
  const queue = plans.flatMap((plan, index) => (plan.kind === 'run' ? [{ plan, index }] : []));
  const worker = async () => {
    for (let next = queue.shift(); next && !turn.signal.aborted; next = queue.shift()) {
      const ran = await runOne(deps, turn, log, next.plan);
      if (!turn.signal.aborted) outcomes[next.index] = ran;
    }
  };
  const workers = Math.max(1, Math.min(deps.limits.parallelTools, queue.length));
  await Promise.all(Array.from({ length: workers }, worker));
  return outcomes;
}

/** Only what the owner approved, now or with a session grant, runs with the network. */
function mayReachNetwork(plan: Runnable): boolean {
  if (plan.verdict.layer === 'grant') return true;
  return plan.decision === 'once' || plan.decision === 'session';
}

async function runOne(deps: LoopDeps, turn: TurnContext, log: TurnLog, plan: Runnable): Promise<Ran> {
  const { call, tool, args } = plan;
  // Written before the tool runs: later turns read it to keep the session on the sensitive route.
  const sensitive = tool.sensitive === true || tool.sensitiveFor?.(args) === true;
  await log.append({
    kind: 'tool_started',
    callId: call.id,
    tool: call.name,
    ...(sensitive ? { sensitive } : {}),
  });
  await turn.sink({ type: 'tool_started', callId: call.id, tool: call.name, args: call.arguments });
  const started = performance.now();
  const outcome = await runTool(
    tool,
    args,
    {
      signal: turn.signal,
      sessionId: turn.session.id,
      workspace: deps.workspace,
      log: deps.log,
      now: deps.now,
      network: mayReachNetwork(plan),
      unattended: turn.unattended,
    },
    tool.timeoutMs ?? deps.limits.toolTimeoutMs,
  );
  const { text: content, fenced } = await shapeResult(deps, turn, call.name, tool.trusted === true, outcome);
  const durationMs = Math.round(performance.now() - started);
  // A tool's own account of its failure was shaped as a result, and still counts as an error.
  const ok = outcome.ok && outcome.isError !== true;
  await turn.sink({ type: 'tool_finished', callId: call.id, tool: call.name, ok, durationMs });
  return { ok, content, durationMs, fenced };
}
