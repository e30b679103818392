// Stage one of a tool step: what each open call needs, decided from the log, the constraint layer
// and the chain. Nothing runs here and nothing is asked; the step does that from the plans.
import { isDeepStrictEqual } from 'node:util';
import type { ToolCall } from '../gateway/types.ts';
import type { EgressContext } from '../permissions/egress.ts';
import type { Verdict } from '../permissions/gate.ts';
import { approves, type Decision } from '../permissions/vocabulary.ts';
import { shellRunsIn } from '../sandbox/sandbox-config.ts';
import type { Tool } from '../tools/types.ts';
import type { AskedEvent, TurnState } from './turn-state.ts';
import type { LoopDeps, TurnContext, TurnLog } from './turn-types.ts';

export type CallPlan =
  /** Answered without running: a correction, a refusal, a denial, an interrupted call. */
  | { kind: 'result'; call: ToolCall; content: string; verdict?: Verdict; decision?: Decision }
  | {
      kind: 'run';
      call: ToolCall;
      tool: Tool;
      args: Record<string, unknown>;
      verdict: Verdict;
      decision?: Decision;
    }
  /** A question for the owner is still open. */
  | { kind: 'wait'; call: ToolCall }
  | { kind: 'ask'; call: ToolCall; args: Record<string, unknown>; verdict: Verdict };

export async function planCall(
  deps: LoopDeps,
  turn: TurnContext,
  log: TurnLog,
  state: TurnState,
  call: ToolCall,
  egress: EgressContext,
): Promise<CallPlan> {
  if (state.started.has(call.id)) {
    // Started before a crash or a stop and never finished: running it again could repeat a side effect.
    return {
      kind: 'result',
      call,
      content: `${call.name} was interrupted by a restart and was not run again; check whether it took effect before retrying.`,
    };
  }
  const prepared = deps.tools.prepare(call);
  if (!prepared.ok) return { kind: 'result', call, content: prepared.correction };
  const { tool, args } = prepared;
  if ((tool.sensitive === true || tool.sensitiveFor?.(args) === true) && !deps.sensitiveRoute) {
    // Without a local route for private data, its result would go to whatever model is default.
    return {
      kind: 'result',
      call,
      content: `Not run: ${call.name} reads private data and no sensitive_tool_route is configured. Tell the owner.`,
    };
  }
  const asked = state.asked.get(call.id);
  if (asked) return replayDecision(deps, log, state, call, tool, asked);

  const verdict = await deps.gate.judge({
    sessionId: turn.session.id,
    tool: call.name,
    args,
    egress,
    ...(call.name === 'shell' ? { runsIn: shellRunsIn(deps.sandbox, turn.unattended) } : {}),
    ...(turn.unattended ? { unattended: true } : {}),
  });
  switch (verdict.verdict) {
    case 'allow':
      return { kind: 'run', call, tool, args, verdict };
    case 'deny':
      return {
        kind: 'result',
        call,
        content: `Refused by policy (${verdict.layer}): ${verdict.rationale}.`,
        verdict,
      };
    case 'ask':
      if (!turn.unattended) return { kind: 'ask', call, args, verdict };
      return {
        kind: 'result',
        call,
        content: `Not run: nobody is there to approve ${call.name} (${verdict.rationale}). Rewrite the call so it only reads, or leave it out and report what you would have done.`,
        verdict,
        decision: 'auto_deny',
      };
  }
}

/** A call that was asked about: its decision from the log, or its deadline passing now. */
async function replayDecision(
  deps: LoopDeps,
  log: TurnLog,
  state: TurnState,
  call: ToolCall,
  tool: Tool,
  asked: AskedEvent,
): Promise<CallPlan> {
  let decision = state.decisions.get(call.id);
  if (decision === undefined) {
    const due = asked.expiresAt === undefined ? new Date(0) : new Date(asked.expiresAt);
    if (due > deps.now()) return { kind: 'wait', call };
    const expired = await deps.approvals.expire(asked.requestId);
    if (expired.event) log.adopt(expired.event);
    decision = expired.decision;
  }
  const verdict: Verdict = {
    verdict: 'ask',
    layer: asked.layer,
    score: asked.score,
    rationale: asked.rationale,
    ...(asked.canonical !== undefined ? { canonical: asked.canonical } : {}),
  };
  if (!approves(decision)) {
    const why = decision === 'timeout' ? 'the owner did not answer in time' : 'the owner denied it';
    return {
      kind: 'result',
      call,
      content: `Not run: ${why}. Do not retry the same call; ask the owner or take another way.`,
      verdict,
      decision,
    };
  }
  if (!asked.args || !matchesShown(asked.args, asked.canonical)) {
    // Never run something other than what the owner approved.
    return {
      kind: 'result',
      call,
      content: 'Not run: the call no longer matches what the owner approved.',
      verdict,
      decision,
    };
  }
  // Exactly what the owner was shown runs: the logged arguments, not a fresh parse.
  return { kind: 'run', call, tool, args: asked.args, verdict, decision };
}

/** The logged arguments are still exactly what the prompt showed: the command itself, or the arguments. */
function matchesShown(args: Record<string, unknown>, canonical: string | undefined): boolean {
  if (canonical === undefined) return false;
  if (typeof args.command === 'string' && args.command === canonical) return true;
  // jsonb keeps keys in its own order, so compare values, not spellings.
  try {
    return isDeepStrictEqual(JSON.parse(canonical), args);
  } catch {
    return false;
  }
}
