import { randomUUID } from 'node:crypto';
import type { GrantKey } from '../permissions/gate.ts';
import { approves, asLayer, type Decision, type Layer } from '../permissions/vocabulary.ts';
import type { Db, Queryable } from './db.ts';
import { storableJson, storableText } from './storable.ts';

export type { Decision };
export type RequestStatus = 'pending' | 'approved' | 'denied' | 'expired';

export interface PermissionRequest {
  id: string;
  sessionId: string;
  turnId: string;
  callId: string;
  tool: string;
  args: Record<string, unknown>;
  canonical: string;
  score: number;
  layer: Layer;
  rationale: string;
  grant: GrantKey | null;
  status: RequestStatus;
  decision: Decision | null;
  decidedBy: string | null;
  createdAt: Date;
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
  grant_key: GrantKey | null;
  status: RequestStatus;
  decision: Decision | null;
  decided_by: string | null;
  created_at: Date;
  expires_at: Date;
}

const COLUMNS =
  'id, session_id, turn_id, call_id, tool, args, canonical, score, layer, rationale, grant_key, status, decision, decided_by, created_at, expires_at';

const toRequest = (r: Row): PermissionRequest => ({
  id: r.id,
  sessionId: r.session_id,
  turnId: r.turn_id,
  callId: r.call_id,
  tool: r.tool,
  args: r.args,
  canonical: r.canonical,
  score: r.score,
  layer: asLayer(r.layer),
  rationale: r.rationale,
  grant: r.grant_key,
  status: r.status,
  decision: r.decision,
  decidedBy: r.decided_by,
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
});

export type NewRequest = Omit<
  PermissionRequest,
  'id' | 'status' | 'decision' | 'decidedBy' | 'createdAt' | 'expiresAt'
> & { expiresAt: Date };

export type SettleResult =
  | { ok: true; request: PermissionRequest }
  | { ok: false; reason: 'unknown' | 'settled' | 'expired'; request?: PermissionRequest };

const statusOf = (decision: Decision): RequestStatus =>
  decision === 'superseded' ? 'expired' : approves(decision) ? 'approved' : 'denied';

/**
 * The `permission_requests` rows: lookup by id, turn and deadline. Writers take the transaction
 * they belong to (src/core/approvals.ts pairs every write with its session event).
 */
export function permissionRequests(db: Db) {
  const find = async (id: string, q: Queryable = db) => {
    // A malformed id is simply unknown, never a database error.
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    const found = await q.query<Row>(`select ${COLUMNS} from permission_requests where id = $1`, [id]);
    return found.rows[0] ? toRequest(found.rows[0]) : undefined;
  };
  return {
    find,
    async create(q: Queryable, input: NewRequest): Promise<PermissionRequest> {
      const id = randomUUID();
      const created = await q.query<Row>(
        `insert into permission_requests
           (id, session_id, turn_id, call_id, tool, args, canonical, score, layer, rationale, grant_key, expires_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) returning ${COLUMNS}`,
        [
          id,
          input.sessionId,
          input.turnId,
          input.callId,
          input.tool,
          storableJson(input.args),
          storableText(input.canonical),
          input.score,
          input.layer,
          storableText(input.rationale),
          input.grant === null ? null : storableJson(input.grant),
          input.expiresAt,
        ],
      );
      const row = created.rows[0];
      if (!row) throw new Error(`permission request ${id} was not stored`);
      return toRequest(row);
    },

    /**
     * Settles a pending request exactly once; a second decision changes nothing. An expired
     * request can only be closed by its deadline or a new message, never approved late.
     */
    async settle(
      q: Queryable,
      id: string,
      decision: Decision,
      decidedBy: string,
      now: Date,
    ): Promise<SettleResult> {
      if (!/^[0-9a-f-]{36}$/i.test(id)) return { ok: false, reason: 'unknown' };
      const late = decision === 'timeout' || decision === 'superseded';
      const updated = await q.query<Row>(
        `update permission_requests set status = $2, decision = $3, decided_by = $4, decided_at = $5
         where id = $1 and status = 'pending' and (expires_at > $5 or $6) returning ${COLUMNS}`,
        [id, statusOf(decision), decision, decidedBy, now, late],
      );
      if (updated.rows[0]) return { ok: true, request: toRequest(updated.rows[0]) };
      const request = await find(id, q);
      if (!request) return { ok: false, reason: 'unknown' };
      return { ok: false, reason: request.status === 'pending' ? 'expired' : 'settled', request };
    },

    async forTurn(turnId: string, q: Queryable = db): Promise<PermissionRequest[]> {
      const rows = await q.query<Row>(
        `select ${COLUMNS} from permission_requests where turn_id = $1 order by created_at, id`,
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

    /** Every pending request within its deadline, oldest first (for /status). */
    async allWaiting(now: Date): Promise<PermissionRequest[]> {
      const rows = await db.query<Row>(
        `select ${COLUMNS} from permission_requests
         where status = 'pending' and expires_at > $1 order by created_at, id`,
        [now],
      );
      return rows.rows.map(toRequest);
    },

    /** Pending requests of one session still within their deadline, oldest first. */
    async waiting(sessionId: string, now: Date): Promise<PermissionRequest[]> {
      const rows = await db.query<Row>(
        `select ${COLUMNS} from permission_requests
         where session_id = $1 and status = 'pending' and expires_at > $2 order by created_at, id`,
        [sessionId, now],
      );
      return rows.rows.map(toRequest);
    },
  };
}

export type PermissionRequests = ReturnType<typeof permissionRequests>;
