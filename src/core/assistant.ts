import type { Transcriber } from '../attachments/transcribe.ts';
import type { ChannelPort, DecideResult, HandleHooks, OutputReading, ReplySink } from '../channel/port.ts';
import type { SensitiveKind } from '../config/attachments.ts';
import type { BudgetCaps } from '../config/load.ts';
import { costOf, type Price } from '../config/models.ts';
import { DEFAULT_RETRY, type Route, type RouterDeps, sleep } from '../gateway/router.ts';
import { type AttachmentLimits, DEFAULT_ATTACHMENT_LIMITS, DEFAULT_LIMITS, type Limits } from '../limits.ts';
import type { Logger } from '../log.ts';
import { type OutputStore, outputStore } from '../offload/output-store.ts';
import type { GrantStore, PermissionGate } from '../permissions/gate.ts';
import type { Db } from '../store/db.ts';
import { sessionGrants } from '../store/grants.ts';
import { permissionRequests } from '../store/permission-requests.ts';
import { sessionLog } from '../store/session-log.ts';
import { recordUsage } from '../store/usage-ledger.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { approvals } from './approvals.ts';
import { budget } from './budget.ts';
import type { Core, Outbox } from './core.ts';
import { decide } from './decide.ts';
import { handleMessage, runUnattended, type UnattendedInput } from './handle-message.ts';
import { type Lifecycle, lifecycle } from './lifecycle.ts';
import { readStoredOutput } from './read-output.ts';
import { expireOverdue, pendingPrompts, recover } from './recovery.ts';
import { turnRunner } from './turn-runner.ts';
import type { LoopDeps, TurnStatus } from './turn-types.ts';

export type { DecideResult, HandleHooks, OutputReading };

export interface AssistantDeps {
  db: Db;
  route: Route;
  tools: ToolRegistry;
  log: Logger;
  /** The owner's sender id on each channel. Anyone else is ignored. */
  owners: Readonly<Record<string, string>>;
  workspace: string;
  /** The permission chain; required, so no call ever runs under a gate nobody chose. */
  gate: PermissionGate;
  /** The store behind "allow for this session" and /grants; the gate must use the same one. */
  grants?: GrantStore;
  prices?: Record<string, Price>;
  limits?: Partial<Limits>;
  retry?: Partial<Pick<RouterDeps, 'retries' | 'backoffMs' | 'sleep'>>;
  /** Where large results are stored; share it with the retrieve_output tool. */
  outputs?: OutputStore;
  sensitiveRoute?: Route;
  /** Answers `/digest …` (the scheduler's command handler); absent when digests are off. */
  digestCommand?: (text: string, from: { channel: string; room: string }) => Promise<string | undefined>;
  /** One line per installed skill (see src/skills skillIndex). */
  skillIndex?: string;
  /** Spend caps over the usage ledger; none by default. */
  budget?: BudgetCaps;
  /** For /status. */
  version?: string;
  /** Where shell calls run (the shell tool must be given the same sandbox). */
  sandbox?: LoopDeps['sandbox'];
  /** MCP servers' tools (also in `tools`): waited for before a request, some behind an index. */
  outside?: LoopDeps['outside'];
  /** Lines for /tools: what is connected (the caller knows the servers). */
  toolsReport?: () => string[];
  /** Attachment limits, kinds marked sensitive, and the speech-to-text endpoint (none by default). */
  attachments?: {
    limits?: Partial<AttachmentLimits>;
    sensitive?: readonly SensitiveKind[];
    transcribe?: Transcriber;
  };
  now?: () => Date;
}

/** The core: the narrow port channels see, plus what only the composition root may call. */
export interface Assistant extends ChannelPort, Lifecycle {
  /**
   * A turn nobody watches (a scheduled digest): a fresh session, no questions; a call that would
   * ask is denied with a hint. Resolves with how the turn ended.
   */
  runUnattended(input: UnattendedInput, sink: ReplySink): Promise<TurnStatus>;
  /** Resumes turns a crash or a stop cut off; parked turns keep waiting. `start` calls it once. */
  recover(outbox: Outbox): Promise<void>;
  /** Questions nobody answered in time count as "deny"; `start` runs it on a timer. */
  expireOverdue(outbox: Outbox): Promise<number>;
}

/** The one place that decides who is heard and how a message becomes a turn, for every channel. */
export function createAssistant(deps: AssistantDeps): Assistant {
  const core = composeCore(deps);
  const assistant: Assistant = {
    handle: (message, sink, hooks) => handleMessage(core, message, sink, hooks),
    decide: (input, sink) => decide(core, input, sink),
    pendingPrompts: (channel, room) => pendingPrompts(core, channel, room),
    readOutput: (input) =>
      readStoredOutput(
        { db: deps.db, log: deps.log, owners: deps.owners, outputs: core.loop.outputs, now: core.now },
        input,
      ),
    runUnattended: (input, sink) => runUnattended(core, input, sink),
    recover: (outbox) => recover(core, outbox),
    expireOverdue: (outbox) => expireOverdue(core, outbox),
    ...lifecycle(core),
  };
  return assistant;
}

function composeCore(deps: AssistantDeps): Core {
  const now = deps.now ?? (() => new Date());
  const { db, log } = deps;
  const limits: Limits = { ...DEFAULT_LIMITS, ...deps.limits };
  const sessions = sessionLog(db);
  const requests = permissionRequests(db);
  const grants = deps.grants ?? sessionGrants(db, now, limits.grantTtlMs);
  const prices = deps.prices ?? {};
  const loop: LoopDeps = {
    db,
    sessions,
    approvals: approvals({ db, sessions, requests, gate: deps.gate, now, ttlMs: limits.permissionTtlMs }),
    gate: deps.gate,
    tools: deps.tools,
    route: deps.route,
    log,
    now,
    limits,
    workspace: deps.workspace,
    outputs: deps.outputs ?? outputStore(db, now, limits.offload.retentionMs),
    ...(deps.sensitiveRoute ? { sensitiveRoute: deps.sensitiveRoute } : {}),
    skillIndex: deps.skillIndex ?? '',
    ...(deps.sandbox ? { sandbox: deps.sandbox } : {}),
    ...(deps.outside ? { outside: deps.outside } : {}),
    router: {
      retries: deps.retry?.retries ?? DEFAULT_RETRY.retries,
      backoffMs: deps.retry?.backoffMs ?? DEFAULT_RETRY.backoffMs,
      sleep: deps.retry?.sleep ?? sleep,
      record: async () => {},
    },
  };
  const spending = budget({ db, now, caps: deps.budget ?? {} });
  // Usage is recorded against the session whose turn made the call; a cap it crosses is said once.
  const loopFor: Core['loopFor'] = (session, turn) => ({
    ...loop,
    router: {
      ...loop.router,
      record: async (call) => {
        await recordUsage(db, {
          sessionId: session.id,
          ...call,
          costUsd: call.outcome === 'ok' ? costOf(prices, call.model, call.tokensIn, call.tokensOut) : null,
        });
        for (const text of await spending.crossed()) await turn.notice(text);
      },
    },
    ...(turn.unattended ? { stepGuard: () => spending.digestRefusal(session.id) } : {}),
  });
  return {
    db,
    log,
    now,
    owners: deps.owners,
    sessions,
    requests,
    grants,
    loop,
    loopFor,
    runner: turnRunner(),
    driving: new Set(),
    budget: spending,
    owner: { notify: async (text) => log.warn(`for the owner (no channel yet): ${text}`) },
    late: { nudge: () => {} },
    version: deps.version ?? 'unknown',
    startedAt: now(),
    statusLines: async () => [],
    ...(deps.digestCommand ? { digestCommand: deps.digestCommand } : {}),
    ...(deps.toolsReport ? { toolsReport: deps.toolsReport } : {}),
    attachments: {
      limits: { ...DEFAULT_ATTACHMENT_LIMITS, ...deps.attachments?.limits },
      sensitive: deps.attachments?.sensitive ?? [],
      ...(deps.attachments?.transcribe ? { transcribe: deps.attachments.transcribe } : {}),
      outputs: loop.outputs,
      offloadBytes: limits.offload.defaultBytes,
      log,
    },
  };
}
