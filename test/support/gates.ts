// A test-only gate: exempt tools run, everything else asks the owner (score 2), and "allow for
// this session" covers the whole tool. The real chain is src/permissions/chain.ts.
import { EXEMPT_TOOLS, type GrantStore, type PermissionGate } from '../../src/permissions/gate.ts';

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
      const grant = { kind: 'tool', score } as const;
      if (await grants.covers(call.sessionId, call.tool, score)) {
        return {
          verdict: 'allow',
          layer: 'grant',
          score,
          rationale: `you allowed ${call.tool} for this session`,
          grant,
        };
      }
      return {
        verdict: 'ask',
        layer: 'ask',
        score,
        rationale: `${call.tool} is not exempt, so the owner decides`,
        grant,
      };
    },
    async grant(call, key, tx) {
      if (key?.kind !== 'tool') return;
      await grants.add(call.sessionId, call.tool, key.score, undefined, tx);
    },
  };
}
