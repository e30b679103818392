// The delivery ledger: what went out to a room (a final reply, a digest post, a reply delivered
// late), with the platform's message ids or why it did not arrive. Core writes it; adapters only
// report through the `Delivery` a sink returns.
import type { Db, Queryable } from './db.ts';
import { storableJson, storableText } from './storable.ts';

export type DeliveryKind = 'reply' | 'digest' | 'late_reply';

export interface DeliveryRecord {
  kind: DeliveryKind;
  channel: string;
  room: string;
  sessionId?: string | null;
  turnId?: string | null;
  delivered: boolean;
  messageIds: readonly string[];
  error?: string | null;
  /** Kept for a failed reply, so it can be posted once the channel is back. */
  body?: string | null;
}

export interface UndeliveredReply {
  id: number;
  channel: string;
  room: string;
  body: string;
  error: string | null;
  createdAt: Date;
}

export async function recordDelivery(q: Queryable, row: DeliveryRecord): Promise<number> {
  const result = await q.query<{ id: number }>(
    `insert into deliveries (kind, channel, room, session_id, turn_id, status, message_ids, error, body)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning id`,
    [
      row.kind,
      row.channel,
      row.room,
      row.sessionId ?? null,
      row.turnId ?? null,
      row.delivered ? 'delivered' : 'failed',
      storableJson(row.messageIds),
      row.delivered ? null : storableText(row.error ?? 'the channel did not confirm delivery'),
      row.delivered || row.body == null ? null : storableText(row.body),
    ],
  );
  return result.rows[0]?.id as number;
}

/** Failed final replies of a channel nobody has been told about yet, oldest first. */
export async function undeliveredReplies(
  db: Db,
  channel: string,
  maxAttempts: number,
  limit = 20,
): Promise<UndeliveredReply[]> {
  const result = await db.query<{
    id: number;
    channel: string;
    room: string;
    body: string | null;
    error: string | null;
    created_at: Date;
  }>(
    `select id, channel, room, body, error, created_at from deliveries
     where status = 'failed' and kind = 'reply' and reported_at is null and channel = $1
       and report_attempts < $2
     order by id limit $3`,
    [channel, maxAttempts, limit],
  );
  return result.rows.map((r) => ({
    id: Number(r.id),
    channel: r.channel,
    room: r.room,
    body: r.body ?? '',
    error: r.error,
    createdAt: new Date(r.created_at),
  }));
}

/** Claims a failed reply for reporting; false when another sweep (or steward) took it first. */
export async function claimUndelivered(q: Queryable, id: number, at: Date): Promise<boolean> {
  const result = await q.query(
    'update deliveries set reported_at = $2 where id = $1 and reported_at is null returning id',
    [id, at],
  );
  return result.rows.length > 0;
}

/** Gives a claim back when the report itself could not be posted, so the next sweep tries again. */
export async function releaseUndelivered(q: Queryable, id: number): Promise<number> {
  const result = await q.query<{ report_attempts: number }>(
    `update deliveries set reported_at = null, report_attempts = report_attempts + 1 where id = $1
     returning report_attempts`,
    [id],
  );
  return Number(result.rows[0]?.report_attempts ?? 0);
}
