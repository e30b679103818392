// The types every part of a turn shares: what the loop depends on, one turn's context, its view of
// the log, and how a drive ended.
import type { ReplySink, TurnEndStatus } from '../channel/port.ts';
import type { Route, RouterDeps } from '../gateway/router.ts';
import type { Limits } from '../limits.ts';
import type { Logger } from '../log.ts';
import type { OutputStore } from '../offload/output-store.ts';
import type { PermissionGate } from '../permissions/gate.ts';
import type { SandboxConfig } from '../sandbox/sandbox-config.ts';
import type { Db } from '../store/db.ts';
import type { Session, SessionLog } from '../store/session-log.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Appended, Approvals } from './approvals.ts';
import type { SessionEvent, SessionEventData } from './session-events.ts';

export interface LoopDeps {
  db: Db;
  sessions: SessionLog;
  approvals: Approvals;
  gate: PermissionGate;
  tools: ToolRegistry;
  route: Route;
  router: RouterDeps;
  log: Logger;
  now: () => Date;
  limits: Limits;
  workspace: string;
  outputs: OutputStore;
  /** Where a session goes once it has touched private data; without it, sensitive tools are refused. */
  sensitiveRoute?: Route;
  /** One line per installed skill, for the system prompt. */
  skillIndex: string;
  /** Before each model step: a reason to stop here (a digest over its own spend cap), or none. */
  stepGuard?: () => Promise<string | undefined>;
  /** The configured sandbox, so the chain knows where a shell call will run. */
  sandbox?: Pick<SandboxConfig, 'shell' | 'configured'>;
  /** Tools from outside (MCP servers): connected before a model request, large servers behind an index. */
  outside?: OutsideTools;
}

/** What the loop needs of the outside tools; the tools themselves are in the registry. */
export interface OutsideTools {
  /** Resolves once servers still connecting are connected or failed (bounded; never throws). */
  ready(signal: AbortSignal): Promise<void>;
  /** Names whose schemas go out only once the session loaded them with load_tool. */
  indexed(): ReadonlySet<string>;
  /** One line per indexed tool: the servers' words, already stripped of forged markers. */
  indexLines(): readonly string[];
}

export interface TurnContext {
  session: Session;
  turnId: string;
  sink: ReplySink;
  /** No owner is there to ask (scheduled digests): "ask" becomes a denial with a rewrite hint. */
  unattended: boolean;
  /** A restart or a failure cut the turn off before (told to the channel with `turn_started`). */
  recovered?: boolean;
  /** Aborted when steward stops: the turn ends where it stands and resumes at the next start. */
  signal: AbortSignal;
}

/** `interrupted`: a stop cut the turn off; it stays open and the next start resumes it. */
export type TurnStatus = TurnEndStatus;

export interface TurnLog {
  events: SessionEvent[];
  append(data: SessionEventData): Promise<void>;
  /** An event another writer committed for this turn (an approval's transaction). */
  adopt(event: Appended): void;
}
