// The few things the channel does on the homeserver, each retried when rate limited (and sends
// when the homeserver did not answer, under the same transaction id).
import { randomUUID } from 'node:crypto';
import type { MatrixClient } from 'matrix-bot-sdk';
import type { Logger } from '../../src/log.ts';
import type { Member } from './direct-room.ts';
import { withRateLimit } from './rate-limit.ts';
import { editContent, type MessageContent, type TextContent } from './render.ts';
import { orderedNotices } from './typing-notices.ts';

export interface MatrixOps {
  /**
   * Posts a message. With `key` the transaction id is derived from it instead of drawn at random:
   * the homeserver answers a second send under the same key (even from a later process on the
   * same device) with the first event, instead of posting it twice.
   */
  send(room: string, content: MessageContent | TextContent, key?: string): Promise<string>;
  /** Replaces an earlier message's content (m.replace). */
  edit(room: string, eventId: string, content: MessageContent | TextContent): Promise<string>;
  react(room: string, eventId: string, key: string): Promise<string>;
  typing(room: string, on: boolean): Promise<void>;
  /** Uploads `data` and posts it as an m.file with `caption` as its text. */
  sendFile(
    room: string,
    file: { name: string; data: Buffer; caption: string; mimetype?: string },
  ): Promise<string>;
  redact(room: string, eventId: string): Promise<void>;
  /** One event of a room, decrypted when the room is encrypted. */
  event(room: string, eventId: string): Promise<{ sender: string; content: Record<string, unknown> }>;
  join(room: string): Promise<void>;
  /** Leaves a room, or declines an invite to it. */
  leave(room: string): Promise<void>;
  /** Who is in the room or invited to it (and who left), from its member events. */
  members(room: string): Promise<Member[]>;
  /** The room has an m.room.encryption state event (remembered once true: it cannot be undone). */
  encrypted(room: string): Promise<boolean>;
  /** A sync showed the room's encryption event: forget that it was unencrypted. */
  encryptionChanged(room: string): void;
}

export class PlaintextRefusedError extends Error {
  override name = 'PlaintextRefusedError';
}

/**
 * How a message may go into a room. Pure. `sdkEncrypts`: matrix-bot-sdk's own room tracker says
 * it will encrypt (its check treats a failed state lookup as "unencrypted", so it is not trusted
 * alone): an encrypted room gets a message only when both agree, never in clear.
 */
export function sendMode(room: {
  encrypted: boolean;
  cryptoOn: boolean;
  sdkEncrypts: boolean;
}): 'clear' | 'encrypted' | 'refuse' {
  if (!room.encrypted) return room.sdkEncrypts ? 'encrypted' : 'clear';
  return room.cryptoOn && room.sdkEncrypts ? 'encrypted' : 'refuse';
}

const TYPING_TIMEOUT_MS = 30_000;

export function matrixOps(
  client: MatrixClient,
  log: Logger,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): MatrixOps {
  const call = <T>(what: string, work: () => Promise<T>, repeatable = false) =>
    withRateLimit(work, {
      sleep,
      repeatable,
      onWait: (ms, attempt, why) =>
        log.info(
          { what, ms, attempt },
          why === 'rate_limited'
            ? 'matrix: rate limited; waiting as asked'
            : 'matrix: the homeserver did not answer; trying again',
        ),
    });
  const known = new Map<string, boolean>();
  const encrypted = async (room: string): Promise<boolean> => {
    const cached = known.get(room);
    if (cached !== undefined) return cached;
    const found = await call('encryption state', () =>
      client.getRoomStateEvent(room, 'm.room.encryption', ''),
    ).then(
      () => true,
      (error: { statusCode?: number }) => {
        if (error.statusCode === 404) return false;
        throw error;
      },
    );
    known.set(room, found);
    return found;
  };
  /** Whether an event may go into `room` now, and encrypted or not; throws when it may not. */
  const mode = async (room: string) => {
    const m = sendMode({
      encrypted: await encrypted(room),
      cryptoOn: client.crypto !== undefined,
      sdkEncrypts: (await client.crypto?.isRoomEncrypted(room)) ?? false,
    });
    if (m === 'refuse')
      throw new PlaintextRefusedError(`${room} is end-to-end encrypted and cannot be written to in clear`);
    return m;
  };
  const sendEvent = async (what: string, room: string, type: string, content: object, key?: string) => {
    let [eventType, body] = [type, content];
    if ((await mode(room)) === 'encrypted') {
      const crypto = client.crypto as NonNullable<MatrixClient['crypto']>;
      [eventType, body] = ['m.room.encrypted', await crypto.encryptRoomEvent(room, type, content)];
    }
    // One transaction id for every try: a send whose answer was lost (the homeserver restarted,
    // the connection reset) is the same event to the homeserver when tried again, not a second one.
    const txn = key === undefined ? randomUUID() : `steward.${key}`;
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(room)}/send/${encodeURIComponent(eventType)}/${encodeURIComponent(txn)}`;
    return call(
      what,
      async () => ((await client.doRequest('PUT', path, null, body)) as { event_id: string }).event_id,
      true,
    );
  };
  return {
    send: (room, content, key) => sendEvent('send', room, 'm.room.message', content, key),
    edit: (room, eventId, content) =>
      sendEvent('edit', room, 'm.room.message', editContent(eventId, content)),
    react: (room, eventId, key) =>
      sendEvent('react', room, 'm.reaction', {
        'm.relates_to': { rel_type: 'm.annotation', event_id: eventId, key },
      }),
    typing: orderedNotices((room, on) =>
      call('typing', () => client.setTyping(room, on, TYPING_TIMEOUT_MS)).then(
        () => {},
        (error: Error) => log.debug({ room }, `matrix: typing notice failed: ${error.message}`),
      ),
    ),
    async sendFile(room, file) {
      const mimetype = file.mimetype ?? 'text/plain';
      const info = { mimetype, size: file.data.length };
      const base = { msgtype: 'm.file', body: file.caption, filename: file.name, info };
      if ((await mode(room)) === 'clear') {
        const url = await call('upload', () => client.uploadContent(file.data, mimetype, file.name));
        return sendEvent('send', room, 'm.room.message', { ...base, url });
      }
      // In an encrypted room the file is encrypted too: the homeserver stores only ciphertext and
      // the key travels in the (encrypted) event, as `file` instead of `url`.
      const crypto = client.crypto as NonNullable<MatrixClient['crypto']>;
      const encrypted = await crypto.encryptMedia(file.data);
      const url = await call('upload', () =>
        client.uploadContent(encrypted.buffer, 'application/octet-stream', file.name),
      );
      return sendEvent('send', room, 'm.room.message', { ...base, file: { ...encrypted.file, url } });
    },
    event: async (room, eventId) => {
      const found = (await call('event', () => client.getEvent(room, eventId))) as {
        sender: string;
        content?: Record<string, unknown>;
      };
      return { sender: found.sender, content: found.content ?? {} };
    },
    redact: async (room, eventId) => {
      await call('redact', () => client.redactEvent(room, eventId));
    },
    join: async (room) => {
      await call('join', () => client.joinRoom(room));
    },
    leave: async (room) => {
      await call('leave', () => client.leaveRoom(room));
    },
    members: async (room) =>
      (await call('members', () => client.getRoomMembers(room))).map((m) => ({
        user: m.membershipFor,
        membership: m.effectiveMembership,
      })),
    encrypted,
    encryptionChanged: (room) => {
      if (known.get(room) === false) known.delete(room);
    },
  };
}
