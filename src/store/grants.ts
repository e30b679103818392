import { randomUUID } from 'node:crypto';
import type { GrantStore } from '../permissions/gate.ts';
import type { Db } from './db.ts';

export const DEFAULT_GRANT_TTL_MS = 12 * 60 * 60 * 1000;

/** "Allow for this session" rows: per tool, time-boxed, never above score 2. */
export function sessionGrants(db: Db, now: () => Date, ttlMs = DEFAULT_GRANT_TTL_MS): GrantStore {
  return {
    async covers(sessionId, tool, score) {
      const found = await db.query(
        `select 1 from session_grants where session_id = $1 and tool = $2 and program is null
           and revoked_at is null and expires_at > $3 and max_score >= $4 limit 1`,
        [sessionId, tool, now(), score],
      );
      return score < 3 && found.rows.length > 0;
    },
    async add(sessionId, tool, maxScore) {
      if (maxScore >= 3) return;
      const at = now();
      await db.query(
        'insert into session_grants (id, session_id, tool, max_score, created_at, expires_at) values ($1, $2, $3, $4, $5, $6)',
        [randomUUID(), sessionId, tool, maxScore, at, new Date(at.getTime() + ttlMs)],
      );
    },
  };
}
