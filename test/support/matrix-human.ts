// The humans in the Matrix tests: the owner and a stranger, acting through plain client-server API
// calls with their own access tokens, exactly as any Matrix client would.
import { randomUUID } from 'node:crypto';

export interface RoomEvent {
  event_id: string;
  type: string;
  sender: string;
  origin_server_ts: number;
  content: Record<string, unknown> & { body?: string; msgtype?: string; formatted_body?: string };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function matrixHuman(homeserver: string, token: string) {
  async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${homeserver}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json().catch(() => ({}))) as T;
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${JSON.stringify(json)}`);
    return json;
  }
  const room = (id: string) => `/_matrix/client/v3/rooms/${encodeURIComponent(id)}`;
  const send = async (roomId: string, type: string, content: unknown) =>
    (await api<{ event_id: string }>('PUT', `${room(roomId)}/send/${type}/${randomUUID()}`, content))
      .event_id;

  /** Events of a room from `sinceTs` on, oldest first (at most the last 200). */
  const events = async (roomId: string, sinceTs = 0): Promise<RoomEvent[]> => {
    const page = await api<{ chunk: RoomEvent[] }>('GET', `${room(roomId)}/messages?dir=b&limit=200`);
    return page.chunk.filter((e) => e.origin_server_ts >= sinceTs).reverse();
  };

  return {
    api,
    async userId(): Promise<string> {
      return (await api<{ user_id: string }>('GET', '/_matrix/client/v3/account/whoami')).user_id;
    },
    /** `direct`: as clients open a direct chat (is_direct on the invite, trusted_private_chat). */
    async createRoom(
      options: { invite?: string[]; encrypted?: boolean; direct?: boolean } = {},
    ): Promise<string> {
      const created = await api<{ room_id: string }>('POST', '/_matrix/client/v3/createRoom', {
        preset: options.direct ? 'trusted_private_chat' : 'private_chat',
        ...(options.direct ? { is_direct: true } : {}),
        invite: options.invite ?? [],
        initial_state: options.encrypted
          ? [{ type: 'm.room.encryption', state_key: '', content: { algorithm: 'm.megolm.v1.aes-sha2' } }]
          : [],
      });
      return created.room_id;
    },
    async invite(roomId: string, userId: string) {
      await api('POST', `${room(roomId)}/invite`, { user_id: userId });
    },
    async join(roomId: string) {
      await api('POST', `/_matrix/client/v3/join/${encodeURIComponent(roomId)}`, {});
    },
    async joinedRooms(): Promise<string[]> {
      return (await api<{ joined_rooms: string[] }>('GET', '/_matrix/client/v3/joined_rooms')).joined_rooms;
    },
    async accountData(type: string): Promise<Record<string, unknown> | undefined> {
      const me = encodeURIComponent(
        (await api<{ user_id: string }>('GET', '/_matrix/client/v3/account/whoami')).user_id,
      );
      return api('GET', `/_matrix/client/v3/user/${me}/account_data/${type}`).catch(() => undefined);
    },
    async membership(roomId: string, userId: string): Promise<string | undefined> {
      const state = await api<{ membership?: string }>(
        'GET',
        `${room(roomId)}/state/m.room.member/${encodeURIComponent(userId)}`,
      ).catch(() => ({}) as { membership?: string });
      return state.membership;
    },
    async stateEvent(roomId: string, type: string, key = ''): Promise<Record<string, unknown> | undefined> {
      return api('GET', `${room(roomId)}/state/${type}/${encodeURIComponent(key)}`).catch(() => undefined);
    },
    say: (roomId: string, body: string, extra: Record<string, unknown> = {}) =>
      send(roomId, 'm.room.message', { msgtype: 'm.text', body, ...extra }),
    react: (roomId: string, eventId: string, key: string) =>
      send(roomId, 'm.reaction', { 'm.relates_to': { rel_type: 'm.annotation', event_id: eventId, key } }),
    sendEvent: send,
    events,
    /** Polls the room until `match` finds something in the events since `sinceTs`. */
    async waitFor<T>(
      roomId: string,
      sinceTs: number,
      match: (events: RoomEvent[]) => T | undefined,
      what: string,
      timeoutMs = 20_000,
    ): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      let last: RoomEvent[] = [];
      while (Date.now() < deadline) {
        last = await events(roomId, sinceTs);
        const found = match(last);
        if (found !== undefined) return found;
        await sleep(150);
      }
      throw new Error(
        `timed out waiting for ${what}; saw:\n${last.map((e) => `${e.sender} ${e.type} ${JSON.stringify(e.content).slice(0, 200)}`).join('\n')}`,
      );
    },
    /**
     * Watches who types in a room from now on, through incremental syncs: each brings the room's
     * typing set when it changed since the sync before. A snapshot (a sync with no token) takes
     * seconds on a loaded Synapse and costs more; a state shorter than a sync can still be missed,
     * so a test keeps it up until it has been seen.
     */
    async watchTyping(roomId: string) {
      const filter = encodeURIComponent(
        JSON.stringify({
          presence: { types: [] },
          account_data: { types: [] },
          room: { rooms: [roomId], timeline: { limit: 0 }, state: { types: [] } },
        }),
      );
      type Sync = {
        next_batch: string;
        rooms?: { join?: Record<string, { ephemeral?: { events?: RoomEvent[] } }> };
      };
      const sync = (since?: string, timeout = 0) =>
        api<Sync>(
          'GET',
          `/_matrix/client/v3/sync?timeout=${timeout}&filter=${filter}${since ? `&since=${since}` : ''}`,
        );
      const seen: string[][] = [];
      let since = (await sync()).next_batch;
      let stopped = false;
      let failed: Error | undefined;
      const loop = (async () => {
        while (!stopped) {
          const next = await sync(since, 500);
          since = next.next_batch;
          const typing = next.rooms?.join?.[roomId]?.ephemeral?.events?.find((e) => e.type === 'm.typing');
          if (typing) seen.push((typing.content.user_ids as string[] | undefined) ?? []);
        }
      })().catch((error: Error) => {
        failed = error;
      });
      const until = async (what: string, done: (now: string[] | undefined) => boolean, timeoutMs: number) => {
        for (const deadline = Date.now() + timeoutMs; !done(seen.at(-1)); await sleep(50)) {
          if (failed) throw failed;
          if (Date.now() > deadline)
            throw new Error(`timed out waiting for ${what}; typing sets seen: ${JSON.stringify(seen)}`);
        }
      };
      return {
        /** Every typing set the room had since the watch began, oldest first. */
        seen,
        startsTyping: (userId: string, timeoutMs = 15_000) =>
          until(`${userId} to type`, (now) => now?.includes(userId) === true, timeoutMs),
        stopsTyping: (userId: string, timeoutMs = 20_000) =>
          until(`${userId} to stop typing`, (now) => now !== undefined && !now.includes(userId), timeoutMs),
        async stop() {
          stopped = true;
          await loop;
        },
      };
    },
    async download(mxc: string): Promise<string> {
      const [server, id] = mxc.replace('mxc://', '').split('/');
      const response = await fetch(`${homeserver}/_matrix/client/v1/media/download/${server}/${id}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      if (!response.ok) throw new Error(`download ${mxc}: HTTP ${response.status}`);
      return response.text();
    },
  };
}

export type MatrixHuman = ReturnType<typeof matrixHuman>;

/** A message's content as it reads now: the latest m.replace edit applied. */
export function currentContent(events: RoomEvent[], eventId: string): RoomEvent['content'] | undefined {
  const original = events.find((e) => e.event_id === eventId);
  if (!original) return undefined;
  let content = original.content;
  for (const e of events) {
    const relates = e.content['m.relates_to'] as { rel_type?: string; event_id?: string } | undefined;
    if (relates?.rel_type === 'm.replace' && relates.event_id === eventId) {
      content = e.content['m.new_content'] as RoomEvent['content'];
    }
  }
  return content;
}

/** Messages (not edits) from `sender`, with their current content. */
export function messagesFrom(
  events: RoomEvent[],
  sender: string,
): Array<{ eventId: string } & RoomEvent['content']> {
  return events
    .filter((e) => e.sender === sender && e.type === 'm.room.message')
    .filter((e) => (e.content['m.relates_to'] as { rel_type?: string } | undefined)?.rel_type !== 'm.replace')
    .map((e) => ({ eventId: e.event_id, ...(currentContent(events, e.event_id) ?? e.content) }));
}

export function reactionsTo(events: RoomEvent[], eventId: string): Array<{ sender: string; key: string }> {
  return events.flatMap((e) => {
    const relates = e.content['m.relates_to'] as
      | { rel_type?: string; event_id?: string; key?: string }
      | undefined;
    return e.type === 'm.reaction' && relates?.rel_type === 'm.annotation' && relates.event_id === eventId
      ? [{ sender: e.sender, key: relates.key ?? '' }]
      : [];
  });
}
