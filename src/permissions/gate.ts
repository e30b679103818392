// The loop reaches permissions only through this interface. The full chain (policy guard, danger
// classifier, narrow grants) arrives with the permission issue; until then `conservativeGate`
// lets exempt tools through and asks the owner for everything else.

export type VerdictKind = 'allow' | 'ask' | 'deny';

export interface Verdict {
  verdict: VerdictKind;
  /** The layer that decided, e.g. "exempt", "grant", "default". */
  layer: string;
  /** 0 harmless … 3 destructive; score 3 always asks and no grant covers it. */
  score: number;
  /** One line the owner can read. */
  rationale: string;
}

const LEVELS = ['harmless', 'low', 'moderate', 'destructive'] as const;

/** The word shown to the owner beside a score. */
export function dangerLevel(score: number): string {
  return LEVELS[Math.max(0, Math.min(3, Math.trunc(score)))] ?? 'destructive';
}

export interface PermissionCall {
  sessionId: string;
  tool: string;
  args: Record<string, unknown>;
}

export interface PermissionGate {
  judge(call: PermissionCall): Promise<Verdict>;
  /** Records the owner's "allow for this session" for calls like this one. */
  grant(call: PermissionCall, verdict: Verdict): Promise<void>;
}

/** Matched by exact name only: outsiders choose tool names, so no prefix or suffix ever counts. */
export const EXEMPT_TOOLS: ReadonlySet<string> = new Set([
  'current_time',
  'convert_time',
  'calculate',
  'retrieve_output',
  'load_skill',
  'web_fetch',
  'write_file',
]);

export interface GrantStore {
  covers(sessionId: string, tool: string, score: number): Promise<boolean>;
  add(sessionId: string, tool: string, maxScore: number): Promise<void>;
}

export function conservativeGate(
  grants: GrantStore,
  exempt: ReadonlySet<string> = EXEMPT_TOOLS,
): PermissionGate {
  return {
    async judge(call) {
      if (exempt.has(call.tool)) {
        return {
          verdict: 'allow',
          layer: 'exempt',
          score: 0,
          rationale: `${call.tool} is exempt: it has its own guard`,
        };
      }
      const score = 2;
      if (await grants.covers(call.sessionId, call.tool, score)) {
        return {
          verdict: 'allow',
          layer: 'grant',
          score,
          rationale: `you allowed ${call.tool} for this session`,
        };
      }
      return {
        verdict: 'ask',
        layer: 'default',
        score,
        rationale: `${call.tool} is not exempt, so the owner decides`,
      };
    },
    async grant(call, verdict) {
      if (verdict.score >= 3) return;
      await grants.add(call.sessionId, call.tool, verdict.score);
    },
  };
}
