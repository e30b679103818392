// A permission request's whole life: ask, settle, expire, supersede. Each transition is one
// transaction that updates the `permission_requests` row and appends its session event, so a crash
// can never leave the row and the log disagreeing. The loop reads decisions from the log only; the
// row is for lookup by id and deadline.
import type { ToolCall } from '../gateway/types.ts';
import type { PermissionGate, Verdict } from '../permissions/gate.ts';
import type { Decision, OwnerDecision } from '../permissions/vocabulary.ts';
import type { Db, Queryable } from '../store/db.ts';
import type { PermissionRequest, PermissionRequests, SettleResult } from '../store/permission-requests.ts';
import type { SessionLog } from '../store/session-log.ts';
import type { SessionEventData } from './session-events.ts';
import { turnState } from './turn-state.ts';

export interface ApprovalDeps {
  db: Db;
  sessions: SessionLog;
  requests: PermissionRequests;
  gate: PermissionGate;
  now: () => Date;
  /** How long a question waits for the owner before it counts as denied. */
  ttlMs: number;
}

/** An event a transition appended, so a running loop can add it to its view of the log. */
export interface Appended {
  id: number;
  data: SessionEventData;
}

/** Who settles what nobody answered. */
export const STEWARD = 'steward';

/** Settles the row and, only if this call won, appends the decision; both or neither. */
async function settleIn(
  deps: ApprovalDeps,
  tx: Queryable,
  requestId: string,
  decision: Decision,
  decidedBy: string,
): Promise<{ settled: SettleResult; event?: Appended }> {
  const settled = await deps.requests.settle(tx, requestId, decision, decidedBy, deps.now());
  if (!settled.ok) return { settled };
  const { request } = settled;
  const data: SessionEventData = {
    kind: 'permission_decision',
    callId: request.callId,
    requestId: request.id,
    decision,
    decidedBy,
  };
  const id = await deps.sessions.append(request.sessionId, data, request.turnId, tx);
  return { settled, event: { id, data } };
}

export interface AskInput {
  sessionId: string;
  turnId: string;
  call: ToolCall;
  args: Record<string, unknown>;
  verdict: Verdict;
}

/** A new question for the owner: the row and its `permission_requested` event. */
function ask(deps: ApprovalDeps, input: AskInput): Promise<{ request: PermissionRequest; event: Appended }> {
  const { call, args, verdict } = input;
  // For shell the owner reads the command exactly as judged; for other tools, the arguments.
  const canonical = verdict.canonical ?? JSON.stringify(args);
  const expiresAt = new Date(deps.now().getTime() + deps.ttlMs);
  return deps.db.transaction(async (tx) => {
    const request = await deps.requests.create(tx, {
      sessionId: input.sessionId,
      turnId: input.turnId,
      callId: call.id,
      tool: call.name,
      args,
      canonical,
      score: verdict.score,
      layer: verdict.layer,
      rationale: verdict.rationale,
      grant: verdict.grant ?? null,
      expiresAt,
    });
    const data: SessionEventData = {
      kind: 'permission_requested',
      callId: call.id,
      requestId: request.id,
      tool: call.name,
      score: verdict.score,
      layer: verdict.layer,
      rationale: verdict.rationale,
      args,
      canonical,
      expiresAt: expiresAt.toISOString(),
    };
    const id = await deps.sessions.append(input.sessionId, data, input.turnId, tx);
    return { request, event: { id, data } };
  });
}

/**
 * The owner's answer. Recorded once (a second press changes nothing); an expired request is never
 * approved late. "session" stores its grant in the same transaction.
 */
function settle(
  deps: ApprovalDeps,
  requestId: string,
  decision: OwnerDecision,
  decidedBy: string,
): Promise<SettleResult> {
  return deps.db.transaction(async (tx) => {
    const { settled } = await settleIn(deps, tx, requestId, decision, decidedBy);
    if (settled.ok && decision === 'session') {
      const { request } = settled;
      await deps.gate.grant(
        { sessionId: request.sessionId, tool: request.tool, args: request.args },
        request.grant ?? undefined,
        tx,
      );
    }
    return settled;
  });
}

/**
 * Closes a request whose deadline passed as a timeout. Returns the decision that stands, this one
 * or whichever settled it first, and the event when this call wrote it.
 */
function expire(deps: ApprovalDeps, requestId: string): Promise<{ decision: Decision; event?: Appended }> {
  return deps.db.transaction(async (tx) => {
    const { settled, event } = await settleIn(deps, tx, requestId, 'timeout', STEWARD);
    if (settled.ok) return event ? { decision: 'timeout', event } : { decision: 'timeout' };
    return { decision: settled.request?.decision ?? 'timeout' };
  });
}

/**
 * A new message while turns of the session wait closes them: open questions are settled as
 * superseded, open calls get "not run" results, and the turn ends; one transaction per turn.
 * Returns how many calls were dropped.
 */
async function supersede(deps: ApprovalDeps, sessionId: string): Promise<number> {
  const { sessions } = deps;
  let dropped = 0;
  // The open turns come from one indexed query: every new message passes here, and reading the
  // whole log for it would cost a long session a full parse per message.
  const open = new Set((await sessions.openTurns(sessionId)).map((t) => t.turnId));
  for (const turnId of open) {
    dropped += await deps.db.transaction(async (tx) => {
      const state = turnState(await sessions.recent(sessionId, tx), turnId);
      if (state.ended) return 0;
      for (const [callId, requestId] of state.requests) {
        if (!state.decisions.has(callId)) await settleIn(deps, tx, requestId, 'superseded', STEWARD);
      }
      for (const call of state.openCalls) {
        const data: SessionEventData = {
          kind: 'tool_result',
          callId: call.id,
          tool: call.name,
          content: 'Not run: the owner sent a new message instead of deciding.',
          isError: true,
        };
        await sessions.append(sessionId, data, turnId, tx);
      }
      await sessions.append(sessionId, { kind: 'turn_ended', outcome: 'superseded' }, turnId, tx);
      return state.openCalls.length;
    });
  }
  return dropped;
}

export function approvals(deps: ApprovalDeps) {
  return {
    ask: (input: AskInput) => ask(deps, input),
    settle: (requestId: string, decision: OwnerDecision, decidedBy: string) =>
      settle(deps, requestId, decision, decidedBy),
    expire: (requestId: string) => expire(deps, requestId),
    supersede: (sessionId: string) => supersede(deps, sessionId),
  };
}

export type Approvals = ReturnType<typeof approvals>;
