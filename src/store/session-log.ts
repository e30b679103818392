import { randomUUID } from 'node:crypto';
import { FACTS_VERSION, type SessionEvent, type SessionEventData } from '../core/session-events.ts';
import type { Db, Queryable } from './db.ts';
import { storableJson } from './storable.ts';

export interface Session {
  id: string;
  channel: string;
  room: string;
  createdAt: Date;
}

interface SessionRow {
  id: string;
  channel: string;
  room: string;
  created_at: Date;
}

const toSession = (row: SessionRow): Session => ({
  id: row.id,
  channel: row.channel,
  room: row.room,
  createdAt: row.created_at,
});

/** Sessions and their append-only event log. */
export function sessionLog(db: Db) {
  const findOpen = async (channel: string, room: string) => {
    const found = await db.query<SessionRow>(
      'select id, channel, room, created_at from sessions where channel = $1 and room = $2 and ended_at is null',
      [channel, room],
    );
    return found.rows[0] ? toSession(found.rows[0]) : undefined;
  };

  return {
    /** The open session of a room, created on first use. Safe when two callers race. */
    async open(channel: string, room: string): Promise<Session> {
      const existing = await findOpen(channel, room);
      if (existing) return existing;
      await db.query(
        `insert into sessions (id, channel, room) values ($1, $2, $3)
         on conflict (channel, room) where ended_at is null do nothing`,
        [randomUUID(), channel, room],
      );
      const created = await findOpen(channel, room);
      if (!created) throw new Error(`session for ${channel}/${room} vanished while it was opened`);
      return created;
    },

    /** Closes the room's open session and opens a fresh one; the old events stay in the log. */
    async startFresh(channel: string, room: string): Promise<Session> {
      const id = randomUUID();
      await db.transaction(async (tx) => {
        await tx.query(
          'update sessions set ended_at = now() where channel = $1 and room = $2 and ended_at is null',
          [channel, room],
        );
        await tx.query('insert into sessions (id, channel, room) values ($1, $2, $3)', [id, channel, room]);
      });
      const session = await findOpen(channel, room);
      if (!session || session.id !== id) throw new Error(`new session for ${channel}/${room} was not stored`);
      return session;
    },

    async get(id: string): Promise<Session | undefined> {
      const found = await db.query<SessionRow>(
        'select id, channel, room, created_at from sessions where id = $1',
        [id],
      );
      return found.rows[0] ? toSession(found.rows[0]) : undefined;
    },

    /**
     * Turns that began and never ended, oldest first: of one session (looked for only where a turn
     * reads, as a compaction never folds an open turn, so the cost does not grow with the
     * session's age), or of every session (at start-up and on the sweeper's timer).
     */
    async openTurns(sessionId?: string): Promise<Array<{ sessionId: string; turnId: string }>> {
      const result = await db.query<{ session_id: string; turn_id: string }>(
        sessionId === undefined
          ? `select e.session_id, e.turn_id from session_events e
             where e.kind = 'user_message'
               and not exists (select 1 from session_events t
                               where t.turn_id = e.turn_id and t.session_id = e.session_id
                                 and t.kind = 'turn_ended')
             order by e.id`
          : // A turn's end is looked up by its id (the turn_frames index), never by the window:
            // with the window's bounds, PGlite (which has no statistics) scanned the whole window
            // again for each message, 77 ms at 300 turns against 3 ms. A turn ends after it begins,
            // so the end of a turn begun in the window is in it too.
            `select e.session_id, e.turn_id from session_events e
             where e.session_id = $1 and e.id > ${WINDOW_START} and e.kind = 'user_message'
               and not exists (select 1 from session_events t
                               where t.turn_id = e.turn_id and t.kind = 'turn_ended')
             order by e.id`,
        sessionId === undefined ? [] : [sessionId, String(FACTS_VERSION)],
      );
      return result.rows.map((r) => ({ sessionId: r.session_id, turnId: r.turn_id }));
    },

    /** Whether this turn began and has not ended (one index lookup, whatever the log's size). */
    async isOpen(turnId: string): Promise<boolean> {
      const found = await db.query<{ open: boolean }>(
        `select exists (select 1 from session_events where turn_id = $1 and kind = 'user_message')
            and not exists (select 1 from session_events where turn_id = $1 and kind = 'turn_ended') as open`,
        [turnId],
      );
      return found.rows[0]?.open === true;
    },

    /** Whether a message with this platform id was already taken into any session of the room. */
    async seenInbound(channel: string, room: string, inboundId: string): Promise<boolean> {
      const found = await db.query(
        `select 1 from session_events e join sessions s on s.id = e.session_id
         where s.channel = $1 and s.room = $2 and e.kind = 'user_message' and e.payload->>'inboundId' = $3 limit 1`,
        [channel, room, inboundId],
      );
      return found.rows.length > 0;
    },

    /** Appends one event; inside the caller's transaction when `q` is given. */
    async append(
      sessionId: string,
      data: SessionEventData,
      turnId: string | null = null,
      q: Queryable = db,
    ): Promise<number> {
      const { kind, ...payload } = data;
      const result = await q.query<{ id: number }>(
        'insert into session_events (session_id, turn_id, kind, payload) values ($1, $2, $3, $4) returning id',
        [sessionId, turnId, kind, storableJson(payload)],
      );
      return result.rows[0]?.id ?? 0;
    },

    /** The whole log of a session, for reports and tests; a turn reads `recent`. */
    async events(sessionId: string, q: Queryable = db): Promise<SessionEvent[]> {
      const result = await q.query<EventRow>(
        `select ${EVENT_COLUMNS} from session_events where session_id = $1 order by id`,
        [sessionId],
      );
      return result.rows.map(toEvent);
    },

    /**
     * What a turn needs of the log: the newest compaction that carries the session's facts
     * (src/core/session-facts.ts) and every event after the turns it folded. Folded turns are
     * whole and ended, so no open turn, call or question is cut; without such a compaction, the
     * whole log. So a turn's read is bounded by the compaction budget, not by the session's age.
     */
    async recent(sessionId: string, q: Queryable = db): Promise<SessionEvent[]> {
      const result = await q.query<EventRow>(
        `select ${EVENT_COLUMNS} from session_events
         where session_id = $1 and id > ${WINDOW_START} order by id`,
        [sessionId, String(FACTS_VERSION)],
      );
      return result.rows.map(toEvent);
    },
  };
}

const EVENT_COLUMNS = 'id, session_id, turn_id, kind, payload, created_at';

/**
 * Where a turn's read of session $1 begins: after the turns folded by the newest compaction that
 * carries facts of version $2 (0, the whole log, without one).
 */
const WINDOW_START = `coalesce((
  select (c.payload->>'throughEventId')::bigint from session_events c
  where c.session_id = $1 and c.kind = 'compaction' and c.payload->'carried'->>'version' = $2
  order by c.id desc limit 1), 0)`;

interface EventRow {
  id: number;
  session_id: string;
  turn_id: string | null;
  kind: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

const toEvent = (row: EventRow): SessionEvent => ({
  id: row.id,
  sessionId: row.session_id,
  turnId: row.turn_id,
  data: { kind: row.kind, ...row.payload } as SessionEventData,
  createdAt: row.created_at,
});

export type SessionLog = ReturnType<typeof sessionLog>;
