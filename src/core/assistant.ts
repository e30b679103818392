import { randomUUID } from 'node:crypto';
import type { InboundMessage, PermissionDecision, PermissionPrompt, ReplySink } from '../channel/port.ts';
import { costOf, type Price } from '../config/models.ts';
import { DEFAULT_RETRY, type Route, type RouterDeps, sleep } from '../gateway/router.ts';
import type { Logger } from '../log.ts';
import { type OutputStore, outputStore } from '../offload/output-store.ts';
import { conservativeGate, dangerLevel, type GrantStore, type PermissionGate } from '../permissions/gate.ts';
import type { Db } from '../store/db.ts';
import { sessionGrants } from '../store/grants.ts';
import { permissionRequests } from '../store/permission-requests.ts';
import { type Session, sessionLog } from '../store/session-log.ts';
import { recordUsage } from '../store/usage-ledger.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../tools/run-tool.ts';
import { driveTurn, type LoopDeps, type TurnStatus } from './agent-loop.ts';
import { type Ceilings, DEFAULT_CEILINGS } from './ceilings.ts';
import { answerCommand } from './commands.ts';
import { type OutputReading, readStoredOutput } from './read-output.ts';

export type { OutputReading };

import { supersedeOpenTurns } from './supersede.ts';

export interface AssistantDeps {
  db: Db;
  route: Route;
  tools: ToolRegistry;
  log: Logger;
  /** The owner's sender id on each channel. Anyone else is ignored. */
  owners: Readonly<Record<string, string>>;
  workspace: string;
  prices?: Record<string, Price>;
  gate?: PermissionGate;
  /** The store behind "allow for this session"; the gate must use the same one. */
  grants?: GrantStore;
  ceilings?: Ceilings;
  parallelTools?: number;
  permissionTtlMs?: number;
  toolTimeoutMs?: number;
  retry?: Partial<Pick<RouterDeps, 'retries' | 'backoffMs' | 'sleep'>>;
  /** Where large results are stored; share it with the retrieve_output tool. */
  outputs?: OutputStore;
  offload?: Partial<LoopDeps['offload']>;
  sensitiveRoute?: Route;
  compaction?: LoopDeps['compaction'];
  /** Answers `/digest …` (the scheduler's command handler); absent when digests are off. */
  digestCommand?: (text: string, from: { channel: string; room: string }) => Promise<string | undefined>;
  /** One line per installed skill (see src/skills skillIndex). */
  skillIndex?: string;
  now?: () => Date;
}

export interface HandleHooks {
  /**
   * Called once the message is safely in the log (or needs no logging: ignored, a repeat, a
   * command), before the turn runs; a webhook answers its platform here.
   */
  accepted?(): void;
}

export type DecideResult =
  | { ok: true }
  | { ok: false; reason: 'not_owner' | 'unknown' | 'settled' | 'expired'; text: string };

export interface Assistant {
  /** Handles one inbound message; resolves when the turn is answered, parked or failed. */
  handle(message: InboundMessage, sink: ReplySink, hooks?: HandleHooks): Promise<void>;
  /** The owner's answer to a permission prompt; the parked turn continues on `sink`. */
  decide(
    input: { requestId: string; decision: PermissionDecision; channel: string; senderId: string },
    sink: ReplySink,
  ): Promise<DecideResult>;
  /**
   * A turn nobody watches (a scheduled digest): a fresh session, no questions; a call that would
   * ask is denied with a hint. Resolves with how the turn ended.
   */
  runUnattended(input: { channel: string; room: string; text: string }, sink: ReplySink): Promise<TurnStatus>;
  /** After a restart: resumes turns a crash cut off. Parked turns keep waiting for a decision. */
  recover(outbox: (channel: string, room: string) => ReplySink | undefined): Promise<void>;
  /**
   * Questions nobody answered in time count as "deny": the owner is told, and each waiting turn
   * goes on with the denial. Call it now and then (the CLI does every 30 s).
   */
  expireOverdue(outbox: (channel: string, room: string) => ReplySink | undefined): Promise<number>;
  /** Questions still waiting in a room, so a channel can show them again after a restart. */
  pendingPrompts(channel: string, room: string): Promise<PermissionPrompt[]>;
  /**
   * The whole of a large result stored in this room (any of its sessions), page by page, so a
   * channel can hand it to the owner as a file. Owner only, like everything else here.
   */
  readOutput(input: { channel: string; room: string; senderId: string; ref: string }): Promise<OutputReading>;
}

/** The sender of an unattended turn's message (a scheduled digest): no owner is there to ask. */
const UNATTENDED_SENDER = 'steward';

/** 8 KiB, and 4 KiB for shell, whose output is often a long log. */
export const DEFAULT_OFFLOAD = {
  defaultBytes: 8192,
  thresholdBytes: { shell: 4096 } as Record<string, number>,
};

/** The one place that decides who is heard and how a message becomes a turn, for every channel. */
export function createAssistant(deps: AssistantDeps): Assistant {
  const now = deps.now ?? (() => new Date());
  const { db, log } = deps;
  const sessions = sessionLog(db);
  const requests = permissionRequests(db);
  const prices = deps.prices ?? {};
  const grants = deps.grants ?? sessionGrants(db, now);
  const loop: LoopDeps = {
    db,
    sessions,
    requests,
    gate: deps.gate ?? conservativeGate(grants),
    tools: deps.tools,
    route: deps.route,
    log,
    now,
    ceilings: deps.ceilings ?? DEFAULT_CEILINGS,
    parallel: deps.parallelTools ?? 4,
    workspace: deps.workspace,
    permissionTtlMs: deps.permissionTtlMs ?? 30 * 60 * 1000,
    toolTimeoutMs: deps.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    outputs: deps.outputs ?? outputStore(db, now),
    offload: {
      defaultBytes: deps.offload?.defaultBytes ?? DEFAULT_OFFLOAD.defaultBytes,
      thresholdBytes: deps.offload?.thresholdBytes ?? DEFAULT_OFFLOAD.thresholdBytes,
    },
    ...(deps.sensitiveRoute ? { sensitiveRoute: deps.sensitiveRoute } : {}),
    compaction: deps.compaction ?? { budgetTokens: 24_000, keepTurns: 4 },
    skillIndex: deps.skillIndex ?? '',
    router: {
      retries: deps.retry?.retries ?? DEFAULT_RETRY.retries,
      backoffMs: deps.retry?.backoffMs ?? DEFAULT_RETRY.backoffMs,
      sleep: deps.retry?.sleep ?? sleep,
      record: async () => {},
    },
  };
  const loopFor = (session: Session): LoopDeps => ({
    ...loop,
    router: {
      ...loop.router,
      record: (call) =>
        recordUsage(db, {
          sessionId: session.id,
          ...call,
          costUsd: call.outcome === 'ok' ? costOf(prices, call.model, call.tokensIn, call.tokensOut) : null,
        }),
    },
  });

  // Messages and decisions of one room are handled one at a time, in the order they arrived.
  const queues = new Map<string, Promise<void>>();
  const serialize = (channel: string, room: string, work: () => Promise<void>): Promise<void> => {
    const key = `${channel}\u0000${room}`;
    const next = (queues.get(key) ?? Promise.resolve()).then(work, work);
    const settled = next.catch(() => {});
    queues.set(key, settled);
    void settled.then(() => {
      if (queues.get(key) === settled) queues.delete(key);
    });
    return next;
  };

  const closeOpenTurns = (session: Session, sink: ReplySink) =>
    supersedeOpenTurns({ sessions, requests, now }, session, sink);

  return {
    handle(message, sink, hooks) {
      let accepted = false;
      const accept = () => {
        if (accepted) return;
        accepted = true;
        hooks?.accepted?.();
      };
      if (deps.owners[message.channel] !== message.senderId) {
        accept();
        log.info({ channel: message.channel }, 'ignored a message from someone other than the owner');
        return Promise.resolve();
      }
      const work = serialize(message.channel, message.room, async () => {
        if (
          message.id !== undefined &&
          (await sessions.seenInbound(message.channel, message.room, message.id))
        ) {
          log.info({ channel: message.channel }, 'skipped a message delivered again after a restart');
          return;
        }
        const { channel, room } = message;
        const answer = await answerCommand(message.text, { db, sessions, grants, now: now(), channel, room });
        if (answer !== undefined) {
          await sink({ type: 'reply', text: answer });
          return;
        }
        if (/^\/digest(\s|$)/.test(message.text.trim())) {
          const digest = await deps.digestCommand?.(message.text.trim(), { channel, room });
          await sink({ type: 'reply', text: digest ?? 'Scheduled digests are not available here.' });
          return;
        }
        const research = /^\/research\s/.test(message.text.trim());
        const body = research ? message.text.trim().replace(/^\/research\s+/, '') : message.text;
        const session = await sessions.open(message.channel, message.room);
        await closeOpenTurns(session, sink);
        const turnId = randomUUID();
        await sessions.append(
          session.id,
          {
            kind: 'user_message',
            text: body,
            sender: message.senderId,
            ...(research ? { research } : {}),
            ...(message.id !== undefined ? { inboundId: message.id } : {}),
          },
          turnId,
        );
        accept();
        await driveTurn(loopFor(session), { session, turnId, sink, unattended: false });
      });
      // Commands and repeats need no log entry: accepted once done. A failure before the message was
      // logged is not accepted, so the platform delivers it again.
      return work.then(accept);
    },

    async decide(input, sink) {
      if (deps.owners[input.channel] !== input.senderId) {
        log.info(
          { channel: input.channel },
          'ignored a permission decision from someone other than the owner',
        );
        return { ok: false, reason: 'not_owner', text: 'Not allowed: only the owner decides.' };
      }
      const settled = await requests.settle(input.requestId, input.decision, input.senderId, now());
      if (!settled.ok) {
        const text = {
          unknown: 'That request is unknown.',
          settled: `That request was already settled (${settled.request?.decision ?? 'closed'}).`,
          expired: 'That request has expired; nothing was run.',
        }[settled.reason];
        if (settled.reason === 'expired' && settled.request) {
          // The turn still waits on it: close it as a timeout so it can finish.
          const { request } = settled;
          const session = await sessions.get(request.sessionId);
          if (session) {
            await serialize(session.channel, session.room, () =>
              driveTurn(loopFor(session), { session, turnId: request.turnId, sink, unattended: false }).then(
                () => {},
              ),
            );
          }
        }
        return { ok: false, reason: settled.reason, text };
      }
      const { request } = settled;
      const session = await sessions.get(request.sessionId);
      if (!session) return { ok: false, reason: 'unknown', text: 'That request belongs to no session.' };
      await serialize(session.channel, session.room, async () => {
        await sessions.append(
          session.id,
          {
            kind: 'permission_decision',
            callId: request.callId,
            requestId: request.id,
            decision: input.decision,
            decidedBy: input.senderId,
          },
          request.turnId,
        );
        if (input.decision === 'session') {
          await loop.gate.grant(
            { sessionId: session.id, tool: request.tool, args: request.args },
            { verdict: 'ask', layer: request.layer, score: request.score, rationale: request.rationale },
          );
        }
        await sink({
          type: 'permission_settled',
          requestId: request.id,
          decision: input.decision,
          decidedBy: input.senderId,
        });
        await driveTurn(loopFor(session), { session, turnId: request.turnId, sink, unattended: false });
      });
      return { ok: true };
    },

    async runUnattended(input, sink) {
      let status: TurnStatus = 'failed';
      await serialize(input.channel, input.room, async () => {
        const session = await sessions.startFresh(input.channel, input.room);
        const turnId = randomUUID();
        await sessions.append(
          session.id,
          { kind: 'user_message', text: input.text, sender: UNATTENDED_SENDER },
          turnId,
        );
        status = await driveTurn(loopFor(session), { session, turnId, sink, unattended: true });
      });
      return status;
    },

    async recover(outbox) {
      for (const { sessionId, turnId } of await sessions.openTurns()) {
        const session = await sessions.get(sessionId);
        const sink = session && outbox(session.channel, session.room);
        if (!session || !sink) continue;
        const pending = (await requests.forTurn(turnId)).some(
          (r) => r.status === 'pending' && r.expiresAt > now(),
        );
        if (pending) continue;
        // A digest's turn was unattended when it began and stays so: nobody is there to ask.
        const events = await sessions.events(session.id);
        const unattended = events.some(
          (e) => e.turnId === turnId && e.data.kind === 'user_message' && e.data.sender === UNATTENDED_SENDER,
        );
        await serialize(session.channel, session.room, async () => {
          await sink({ type: 'notice', level: 'info', text: 'Resuming a turn that a restart cut off.' });
          await driveTurn(loopFor(session), { session, turnId, sink, unattended });
        });
      }
    },

    async expireOverdue(outbox) {
      let expired = 0;
      for (const request of await requests.overdue(now())) {
        const session = await sessions.get(request.sessionId);
        const sink = session && outbox(session.channel, session.room);
        if (!session || !sink) continue;
        await serialize(session.channel, session.room, async () => {
          const settled = await requests.settle(request.id, 'timeout', 'steward', now(), true);
          if (!settled.ok) return;
          expired++;
          await sessions.append(
            session.id,
            {
              kind: 'permission_decision',
              callId: request.callId,
              requestId: request.id,
              decision: 'timeout',
              decidedBy: 'steward',
            },
            request.turnId,
          );
          await sink({
            type: 'permission_settled',
            requestId: request.id,
            decision: 'timeout',
            decidedBy: 'steward',
          });
          await sink({
            type: 'notice',
            level: 'info',
            text: `No answer in time, so ${request.tool} was not run.`,
          });
          await driveTurn(loopFor(session), { session, turnId: request.turnId, sink, unattended: false });
        });
      }
      return expired;
    },

    async pendingPrompts(channel, room) {
      const session = await sessions.open(channel, room);
      const prompts: PermissionPrompt[] = [];
      for (const { turnId } of await sessions.openTurns(session.id)) {
        for (const r of await requests.forTurn(turnId)) {
          if (r.status !== 'pending' || r.expiresAt <= now()) continue;
          prompts.push({
            requestId: r.id,
            tool: r.tool,
            args: r.canonical,
            score: r.score,
            level: dangerLevel(r.score),
            layer: r.layer,
            rationale: r.rationale,
          });
        }
      }
      return prompts;
    },

    readOutput: (input) =>
      readStoredOutput({ db, log, owners: deps.owners, outputs: loop.outputs, now }, input),
  };
}
