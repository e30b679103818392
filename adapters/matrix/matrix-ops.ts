// The few things the channel does on the homeserver, each retried when rate limited.
import type { MatrixClient } from 'matrix-bot-sdk';
import type { Logger } from '../../src/log.ts';
import type { Member } from './direct-room.ts';
import { withRateLimit } from './rate-limit.ts';
import { editContent, type MessageContent, type TextContent } from './render.ts';

export interface MatrixOps {
  send(room: string, content: MessageContent | TextContent): Promise<string>;
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
  join(room: string): Promise<void>;
  /** Leaves a room, or declines an invite to it. */
  leave(room: string): Promise<void>;
  /** Who is in the room or invited to it (and who left), from its member events. */
  members(room: string): Promise<Member[]>;
  /** The room has an m.room.encryption state event. */
  encrypted(room: string): Promise<boolean>;
}

const TYPING_TIMEOUT_MS = 30_000;

export function matrixOps(
  client: MatrixClient,
  log: Logger,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): MatrixOps {
  const call = <T>(what: string, work: () => Promise<T>) =>
    withRateLimit(work, {
      sleep,
      onWait: (ms, attempt) => log.info({ what, ms, attempt }, 'matrix: rate limited; waiting as asked'),
    });
  return {
    send: (room, content) => call('send', () => client.sendMessage(room, content)),
    edit: (room, eventId, content) =>
      call('edit', () => client.sendMessage(room, editContent(eventId, content))),
    react: (room, eventId, key) =>
      call('react', () =>
        client.sendEvent(room, 'm.reaction', {
          'm.relates_to': { rel_type: 'm.annotation', event_id: eventId, key },
        }),
      ),
    typing: (room, on) =>
      call('typing', () => client.setTyping(room, on, TYPING_TIMEOUT_MS)).then(
        () => {},
        (error: Error) => log.debug({ room }, `matrix: typing notice failed: ${error.message}`),
      ),
    async sendFile(room, file) {
      const mimetype = file.mimetype ?? 'text/plain';
      const url = await call('upload', () => client.uploadContent(file.data, mimetype, file.name));
      return call('send', () =>
        client.sendMessage(room, {
          msgtype: 'm.file',
          body: file.caption,
          filename: file.name,
          url,
          info: { mimetype, size: file.data.length },
        }),
      );
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
    encrypted: (room) =>
      call('encryption state', () => client.getRoomStateEvent(room, 'm.room.encryption', '')).then(
        () => true,
        (error: { statusCode?: number }) => {
          if (error.statusCode === 404) return false;
          throw error;
        },
      ),
  };
}
