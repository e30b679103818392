import { isDeepStrictEqual } from 'node:util';
import type { ToolCall } from '../gateway/types.ts';
import { dangerLevel, type Verdict } from '../permissions/gate.ts';
import { recordAudit } from '../store/audit-log.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { runTool, type ToolOutcome } from '../tools/run-tool.ts';
import { fence } from '../trust/fence.ts';
import type { LoopDeps, TurnContext, TurnLog } from './agent-loop.ts';
import type { turnState } from './turn-state.ts';

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
export async function settleOpenCalls(
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
    const sensitive =
      prepared.tool.sensitive === true || prepared.tool.sensitiveFor?.(prepared.args) === true;
    if (sensitive && !deps.sensitiveRoute) {
      // Without a local route for private data, its result would go to whatever model is default.
      ready.push({
        call,
        result: {
          ok: false,
          content: `Not run: ${call.name} reads private data and no sensitive_tool_route is configured. Tell the owner.`,
        },
      });
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
      if ((decision === 'once' || decision === 'session') && request && !matchesShown(request)) {
        // Never run something other than what the owner approved.
        ready.push({
          call,
          result: {
            ok: false,
            content: 'Not run: the call no longer matches what the owner approved.',
            verdict,
          },
        });
      } else if (decision === 'once' || decision === 'session') {
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
    const outcome = outcomes[index] as Shaped;
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

interface Shaped {
  ok: boolean;
  content: string;
  durationMs: number;
}

async function runInBatches(deps: LoopDeps, turn: TurnContext, log: TurnLog, ready: Ready[]) {
  const outcomes: Shaped[] = [];
  const queue = ready.map((item, index) => ({ item, index }));
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const { item, index } = next;
      if (!item.run) {
        outcomes[index] = {
          ok: false,
          content: (item.result as ToolOutcome).content as string,
          durationMs: 0,
        };
        continue;
      }
      const { tool, args } = item.run;
      // Written before the tool runs: later turns read it to keep the session on the sensitive route.
      const sensitive = tool.sensitive === true || tool.sensitiveFor?.(args) === true;
      await log.append({
        kind: 'tool_started',
        callId: item.call.id,
        tool: item.call.name,
        ...(sensitive ? { sensitive } : {}),
      });
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
      const content = await shapeResult(deps, turn, item.call.name, tool.trusted === true, outcome);
      const durationMs = Math.round(performance.now() - started);
      outcomes[index] = { ok: outcome.ok, content, durationMs };
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

/**
 * What the model gets for a result: small ones inline, large ones stored with a digest in their
 * place, and anything an outsider may have written fenced as data. Errors are the harness's own
 * prose and pass as they are.
 */
async function shapeResult(
  deps: LoopDeps,
  turn: TurnContext,
  toolName: string,
  toolTrusted: boolean,
  outcome: ToolOutcome,
): Promise<string> {
  if (!outcome.ok) return outcome.content;
  const trusted = outcome.trusted ?? toolTrusted;
  const limit = deps.offload.thresholdBytes[toolName] ?? deps.offload.defaultBytes;
  const small = await takeIfSmall(outcome.content, limit);
  let text: string;
  if (small.done) text = small.text;
  else {
    const stored = await deps.outputs.write(
      { sessionId: turn.session.id, tool: toolName, trusted },
      small.rest,
    );
    await turn.sink({
      type: 'output_offloaded',
      ref: stored.ref,
      tool: toolName,
      bytes: stored.bytes,
      lines: stored.lines,
    });
    text = stored.digest;
  }
  return trusted ? text : fence(text, toolName);
}

/** Reads a result up to `limit` bytes; past that, hands back everything as one stream to store. */
async function takeIfSmall(
  content: string | AsyncIterable<string>,
  limit: number,
): Promise<{ done: true; text: string } | { done: false; rest: string | AsyncIterable<string> }> {
  if (typeof content === 'string') {
    return Buffer.byteLength(content) <= limit
      ? { done: true, text: content }
      : { done: false, rest: content };
  }
  const iterator = content[Symbol.asyncIterator]();
  const head: string[] = [];
  let bytes = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) return { done: true, text: head.join('') };
    head.push(next.value);
    bytes += Buffer.byteLength(next.value);
    if (bytes > limit) break;
  }
  async function* rest() {
    yield* head;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { done: false, rest: rest() };
}

async function askOwner(
  deps: LoopDeps,
  turn: TurnContext,
  log: TurnLog,
  call: ToolCall,
  args: Record<string, unknown>,
  verdict: Verdict,
) {
  // For shell the owner reads the command exactly as judged; for other tools, the arguments.
  const canonical = verdict.canonical ?? JSON.stringify(args);
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

/** The stored arguments are still exactly what the prompt showed: the command itself, or the arguments. */
function matchesShown(request: { args: Record<string, unknown>; canonical: string }): boolean {
  if (typeof request.args.command === 'string' && request.args.command === request.canonical) return true;
  // jsonb keeps keys in its own order, so compare values, not spellings.
  try {
    return isDeepStrictEqual(JSON.parse(request.canonical), request.args);
  } catch {
    return false;
  }
}
