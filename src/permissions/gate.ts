// The loop reaches permissions only through this interface. The chain (policy guard, exempt
// tools, danger classifier, narrow grants, ask) is `permissionChain` in chain.ts.
import type { Queryable } from '../store/db.ts';
import type { EgressContext } from './egress.ts';
import type { Layer } from './vocabulary.ts';

export type VerdictKind = 'allow' | 'ask' | 'deny';

export interface Verdict {
  verdict: VerdictKind;
  /** The layer that decided. */
  layer: Layer;
  /** 0 harmless … 3 destructive; score 3 always asks and no grant covers it. */
  score: number;
  /** One line the owner can read. */
  rationale: string;
  /**
   * Exactly what runs if the call is allowed or approved: for `shell`, the command string as
   * judged (never rebuilt from a parse); for other tools, the arguments as JSON.
   */
  canonical?: string;
  /**
   * What "allow for this session" would store, worked out when the call was judged so a grant
   * never parses the command again: a whole tool (`tool`), shell scopes, or nothing (`none`).
   */
  grant?: GrantKey;
}

export type GrantKey =
  | { kind: 'none' }
  /** "This host for the session": hosts an egress question was about. */
  | { kind: 'hosts'; hosts: string[] }
  | { kind: 'tool'; score: number }
  | { kind: 'shell'; scopes: Array<{ scope: GrantScope; score: number }> };

const LEVELS = ['harmless', 'low', 'moderate', 'destructive'] as const;

/** The word shown to the owner beside a score. */
export function dangerLevel(score: number): string {
  return LEVELS[Math.max(0, Math.min(3, Math.trunc(score)))] ?? 'destructive';
}

export interface PermissionCall {
  sessionId: string;
  tool: string;
  args: Record<string, unknown>;
  /** What the session's log says about egress; absent means untainted (nothing outside read yet). */
  egress?: EgressContext;
  /** Where a shell call will run; absent means the host. Only a container may relax the classifier. */
  runsIn?: 'host' | 'container';
  /** Nobody is there to ask (a scheduled digest). */
  unattended?: boolean;
}

export interface PermissionGate {
  judge(call: PermissionCall): Promise<Verdict>;
  /**
   * Records the owner's "allow for this session" for calls like this one, from the key the verdict
   * carried; inside the caller's transaction when one is given.
   */
  grant(call: PermissionCall, key: GrantKey | undefined, tx?: Queryable): Promise<void>;
}

/** Matched by exact name only: outsiders choose tool names, so no prefix or suffix ever counts. */
export const EXEMPT_TOOLS: ReadonlySet<string> = new Set([
  'current_time',
  'convert_time',
  'calculate',
  'retrieve_output',
  'load_skill',
  'load_tool',
  'web_fetch',
  'write_file',
]);

/**
 * The operator's rules for one outside (MCP) tool, looked up by its model name. Nothing the server
 * says about itself is here except `claims`, which are shown to the owner and grant nothing.
 */
export interface OutsideToolPolicy {
  server: string;
  /** The server's own name for the tool. */
  tool: string;
  /** Listed in `mcp.servers.NAME.allow`: runs without asking. */
  allowed: boolean;
  /** What the server claims (read-only, destructive, …), for the owner's prompt only. */
  claims: readonly string[];
}

/** What a shell grant names: a program and, where it has them, a subcommand (`git add`). */
export interface GrantScope {
  program: string;
  subcommand: string | null;
  /** `host H` / `remote R` for a network program, `exact ARGV` for an unknown one; else none. */
  target?: string | null;
}

export interface Grant {
  id: string;
  sessionId: string;
  tool: string;
  /** Null for a grant on a whole (non-shell) tool. */
  program: string | null;
  subcommand: string | null;
  target: string | null;
  maxScore: number;
  createdAt: Date;
  expiresAt: Date;
}

export interface GrantStore {
  /** A live grant for this tool (and scope, when given) at or above `score`; never for score 3. */
  covers(sessionId: string, tool: string, score: number, scope?: GrantScope): Promise<boolean>;
  /** Records a grant; a live one with the same tool and scope is renewed instead. Ignores score 3. */
  add(sessionId: string, tool: string, maxScore: number, scope?: GrantScope, tx?: Queryable): Promise<void>;
  /** The session's live grants, oldest first (for /grants). */
  list(sessionId: string): Promise<Grant[]>;
  /** Revokes one grant (its id or a unique prefix of at least 4 characters) or 'all'; returns how many. */
  revoke(sessionId: string, which: string): Promise<number>;
}
