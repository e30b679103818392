// The Matrix channel's state in steward's database: matrix-bot-sdk's IStorageProvider (the sync
// token above all), events already taken in, and the prompts posted as messages.
import type { IFilterInfo, IStorageProvider } from 'matrix-bot-sdk';
import type { Db } from '../../src/store/db.ts';
import type { PromptText } from './prompt-text.ts';

const SEEN_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export interface StoredPrompt extends PromptText {
  eventId: string;
  requestId: string;
  promptRoom: string;
  turnRoom: string;
  outcome: string | null;
}

interface PromptRow {
  event_id: string;
  request_id: string;
  prompt_room: string;
  turn_room: string;
  body: string;
  html: string;
  outcome: string | null;
}

const toPrompt = (r: PromptRow): StoredPrompt => ({
  eventId: r.event_id,
  requestId: r.request_id,
  promptRoom: r.prompt_room,
  turnRoom: r.turn_room,
  body: r.body,
  html: r.html,
  outcome: r.outcome,
});

/** State of one bot account (`account` is its user id). */
export function matrixStateStore(db: Db, account: string, now: () => Date = () => new Date()) {
  const get = async (key: string): Promise<string | undefined> =>
    (
      await db.query<{ value: string }>('select value from matrix_state where account = $1 and key = $2', [
        account,
        key,
      ])
    ).rows[0]?.value;
  const set = async (key: string, value: string | null): Promise<void> => {
    if (value === null) {
      await db.query('delete from matrix_state where account = $1 and key = $2', [account, key]);
      return;
    }
    await db.query(
      `insert into matrix_state (account, key, value, updated_at) values ($1, $2, $3, $4)
       on conflict (account, key) do update set value = excluded.value, updated_at = excluded.updated_at`,
      [account, key, value, now()],
    );
  };

  const storage: IStorageProvider = {
    setSyncToken: (token) => set('sync_token', token),
    getSyncToken: async () => (await get('sync_token')) ?? null,
    setFilter: (filter) => set('filter', JSON.stringify(filter)),
    getFilter: async () => {
      const raw = await get('filter');
      return (raw ? JSON.parse(raw) : null) as IFilterInfo;
    },
    storeValue: (key, value) => set(`kv:${key}`, value),
    readValue: (key) => get(`kv:${key}`),
  };

  return {
    get,
    set,
    /** matrix-bot-sdk's storage, over this table. */
    storage,
    /** Whether an event was taken in before (by this process or an earlier one). */
    async seen(eventId: string): Promise<boolean> {
      const found = await db.query('select 1 from matrix_seen_events where account = $1 and event_id = $2', [
        account,
        eventId,
      ]);
      return found.rows.length > 0;
    },
    /** Records an event as taken in; later deliveries of it are skipped. */
    async markSeen(eventId: string): Promise<void> {
      await db.query(
        `insert into matrix_seen_events (account, event_id, seen_at) values ($1, $2, $3)
         on conflict do nothing`,
        [account, eventId, now()],
      );
    },
    async pruneSeen(): Promise<void> {
      await db.query('delete from matrix_seen_events where account = $1 and seen_at < $2', [
        account,
        new Date(now().getTime() - SEEN_RETENTION_MS),
      ]);
    },

    async addPrompt(p: Omit<StoredPrompt, 'outcome'>): Promise<void> {
      await db.query(
        `insert into matrix_prompts (account, event_id, request_id, prompt_room, turn_room, body, html)
         values ($1, $2, $3, $4, $5, $6, $7)`,
        [account, p.eventId, p.requestId, p.promptRoom, p.turnRoom, p.body, p.html],
      );
    },
    async promptByEvent(eventId: string): Promise<StoredPrompt | undefined> {
      const r = await db.query<PromptRow>(
        'select * from matrix_prompts where account = $1 and event_id = $2',
        [account, eventId],
      );
      return r.rows[0] && toPrompt(r.rows[0]);
    },
    async promptByRequest(requestId: string): Promise<StoredPrompt | undefined> {
      const r = await db.query<PromptRow>(
        'select * from matrix_prompts where account = $1 and request_id = $2 order by created_at desc limit 1',
        [account, requestId],
      );
      return r.rows[0] && toPrompt(r.rows[0]);
    },
    /** Prompts in a room still without an outcome, oldest first. */
    async openPrompts(promptRoom: string): Promise<StoredPrompt[]> {
      const r = await db.query<PromptRow>(
        `select * from matrix_prompts where account = $1 and prompt_room = $2 and outcome is null
         order by created_at, event_id`,
        [account, promptRoom],
      );
      return r.rows.map(toPrompt);
    },
    /** Records the outcome once; false when the prompt already had one. */
    async closePrompt(eventId: string, outcome: string): Promise<boolean> {
      const r = await db.query(
        `update matrix_prompts set outcome = $3 where account = $1 and event_id = $2 and outcome is null
         returning event_id`,
        [account, eventId, outcome],
      );
      return r.rows.length === 1;
    },
  };
}

export type MatrixStateStore = ReturnType<typeof matrixStateStore>;
