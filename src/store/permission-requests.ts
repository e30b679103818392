import { randomUUID } from 'node:crypto';
import type { Db } from './db.ts';

export type RequestStatus = 'pending' | 'approved' | 'denied' | 'expired';
export type Decision = 'once' | 'session' | 'deny' | 'timeout' | 'auto_deny';

export interface PermissionRequest {
  id: string;
  sessionId: string;
  turnId: string;
  callId: string;
  tool: string;
  args: Record<string, unknown>;
  canonical: string;
  score: number;
  layer: string;
  rationale: string;
  status: RequestStatus;
  decision: Decision | null;
  decidedBy: string | null;
  expiresAt: Date;
}

interface Row {
  id: string;
  session_id: string;
  turn_id: string;
  call_id: string;
  tool: string;
  args: Record<string, unknown>;
  canonical: string;
  score: number;
  layer: string;
  rationale: string;
  status: RequestStatus;
  decision: Decision | null;
  decided_by: string | null;
  expires_at: Date;
}

const COLUMNS =
  'id, session_id, turn_id, call_id, tool, args, canonical, score, layer, rationale, status, decision, decided_by, expires_at';

const toRequest = (r: Row): PermissionRequest => ({
  id: r.id,
  sessionId: r.session_id,
  turnId: r.turn_id,
  callId: r.call_id,
  tool: r.tool,
  args: r.args,
  canonical: r.canonical,
  score: r.score,
  layer: r.layer,
  rationale: r.rationale,
  status: r.status,
  decision: r.decision,
  decidedBy: r.decided_by,
  expiresAt: new Date(r.expires_at),
});

export type SettleResult =
  | { ok: true; request: PermissionRequest }
  | { ok: false; reason: 'unknown' | 'settled' | 'expired'; request?: PermissionRequest };

export function permissionRequests(db: Db) {
  const find = async (id: string) => {
    // A malformed id is simply unknown, never a database error.
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    const found = await db.query<Row>(`select ${COLUMNS} from permission_requests where id = $1`, [id]);
    return found.rows[0] ? toRequest(found.rows[0]) : undefined;
  };
  return {
    find,
    async create(
      input: Omit<PermissionRequest, 'id' | 'status' | 'decision' | 'decidedBy' | 'expiresAt'>,
      ttlMs: number,
      now: Date,
    ): Promise<PermissionRequest> {
      const id = randomUUID();
      await db.query(
        `insert into permission_requests
           (id, session_id, turn_id, call_id, tool, args, canonical, score, layer, rationale, expires_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          id,
          input.sessionId,
          input.turnId,
          input.callId,
          input.tool,
          JSON.stringify(input.args),
          input.canonical,
          input.score,
          input.layer,
          input.rationale,
          new Date(now.getTime() + ttlMs),
        ],
      );
      const created = await find(id);
      if (!created) throw new Error(`permission request ${id} was not stored`);
      return created;
    },

    /**
     * Settles a pending request exactly once; a second decision changes nothing. An expired request
     * can only be settled as a timeout (`evenIfExpired`), never approved late.
     */
    async settle(
      id: string,
      decision: Decision,
      decidedBy: string,
      now: Date,
      evenIfExpired = false,
    ): Promise<SettleResult> {
      const status: RequestStatus = decision === 'once' || decision === 'session' ? 'approved' : 'denied';
      const updated = await db.query<Row>(
        `update permission_requests set status = $2, decision = $3, decided_by = $4, decided_at = $5
         where id = $1 and status = 'pending' and (expires_at > $5 or $6) returning ${COLUMNS}`,
        [id, status, decision, decidedBy, now, evenIfExpired],
      );
      if (updated.rows[0]) return { ok: true, request: toRequest(updated.rows[0]) };
      const request = await find(id);
      if (!request) return { ok: false, reason: 'unknown' };
      return { ok: false, reason: request.status === 'pending' ? 'expired' : 'settled', request };
    },

    async forTurn(turnId: string): Promise<PermissionRequest[]> {
      const rows = await db.query<Row>(
        `select ${COLUMNS} from permission_requests where turn_id = $1 order by created_at`,
        [turnId],
      );
      return rows.rows.map(toRequest);
    },

    /** Pending requests whose deadline has passed: they count as denied by timeout. */
    async overdue(now: Date): Promise<PermissionRequest[]> {
      const rows = await db.query<Row>(
        `select ${COLUMNS} from permission_requests where status = 'pending' and expires_at <= $1 order by expires_at`,
        [now],
      );
      return rows.rows.map(toRequest);
    },

    /** Closes every pending request of a turn (superseded or timed out). */
    async expireTurn(turnId: string, now: Date): Promise<void> {
      await db.query(
        "update permission_requests set status = 'expired', decided_at = $2 where turn_id = $1 and status = 'pending'",
        [turnId, now],
      );
    },
  };
}

export type PermissionRequests = ReturnType<typeof permissionRequests>;
