import { randomUUID } from 'node:crypto';
import { DEFAULT_LIMITS } from '../limits.ts';
import type { Grant, GrantScope, GrantStore } from '../permissions/gate.ts';
import type { Db, Queryable } from './db.ts';

export const DEFAULT_GRANT_TTL_MS = DEFAULT_LIMITS.grantTtlMs;

interface Row {
  id: string;
  session_id: string;
  tool: string;
  program: string | null;
  subcommand: string | null;
  target: string | null;
  max_score: number;
  created_at: Date;
  expires_at: Date;
}

const toGrant = (r: Row): Grant => ({
  id: r.id,
  sessionId: r.session_id,
  tool: r.tool,
  program: r.program,
  subcommand: r.subcommand,
  target: r.target,
  maxScore: Number(r.max_score),
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
});

const LIVE = 'session_id = $1 and revoked_at is null and expires_at > $2';
/** The same tool and scope: a null program is a grant on the whole (non-shell) tool. */
const sameScope = (target: number) =>
  `tool = $3 and program is not distinct from $4 and subcommand is not distinct from $5 and target is not distinct from $${target}`;

/**
 * "Allow for this session" rows: narrow (a tool, and for shell a program and subcommand),
 * time-boxed (`ttlMs`, 12 hours by default), never above score 2.
 */
export function sessionGrants(db: Db, now: () => Date, ttlMs = DEFAULT_GRANT_TTL_MS): GrantStore {
  return {
    async covers(sessionId, tool, score, scope?: GrantScope) {
      if (score >= 3) return false;
      const found = await db.query(
        `select 1 from session_grants where ${LIVE} and ${sameScope(7)} and max_score >= $6 limit 1`,
        [
          sessionId,
          now(),
          tool,
          scope?.program ?? null,
          scope?.subcommand ?? null,
          score,
          scope?.target ?? null,
        ],
      );
      return found.rows.length > 0;
    },

    async add(sessionId, tool, maxScore, scope?: GrantScope, outer?: Queryable) {
      if (maxScore >= 3 || maxScore < 0) return;
      const at = now();
      const expires = new Date(at.getTime() + ttlMs);
      const params = [sessionId, at, tool, scope?.program ?? null, scope?.subcommand ?? null];
      const work = async (tx: Queryable) => {
        const renewed = await tx.query(
          `update session_grants set expires_at = $6, max_score = greatest(max_score, $7)
             where ${LIVE} and ${sameScope(8)} returning id`,
          [...params, expires, maxScore, scope?.target ?? null],
        );
        if (renewed.rows.length > 0) return;
        await tx.query(
          `insert into session_grants (id, session_id, tool, program, subcommand, target, max_score, created_at, expires_at)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [randomUUID(), sessionId, tool, params[3], params[4], scope?.target ?? null, maxScore, at, expires],
        );
      };
      // Inside a caller's transaction (an approval) the grant commits or vanishes with it.
      await (outer ? work(outer) : db.transaction(work));
    },

    async list(sessionId) {
      const rows = await db.query<Row>(
        `select id, session_id, tool, program, subcommand, target, max_score, created_at, expires_at
           from session_grants where ${LIVE} order by created_at, tool, program, subcommand, id`,
        [sessionId, now()],
      );
      return rows.rows.map(toGrant);
    },

    async revoke(sessionId, which) {
      const target = which.trim().toLowerCase();
      if (target === 'all') {
        const done = await db.query(`update session_grants set revoked_at = $2 where ${LIVE} returning id`, [
          sessionId,
          now(),
        ]);
        return done.rows.length;
      }
      if (!/^[0-9a-f-]{4,36}$/.test(target)) return 0;
      const matches = await db.query<{ id: string }>(
        `select id from session_grants where ${LIVE} and id::text like $3 || '%'`,
        [sessionId, now(), target],
      );
      if (matches.rows.length !== 1) return 0;
      const done = await db.query('update session_grants set revoked_at = $2 where id = $1 returning id', [
        matches.rows[0]?.id,
        now(),
      ]);
      return done.rows.length;
    },
  };
}
