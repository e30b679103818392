// The owner's private room: a direct room between the bot and the owner, where prompts and
// notices go. A direct chat the owner opens with the bot (an invite marked is_direct, nobody else
// in it) is adopted as that room, so the natural first step in any client just works. Found again
// after a restart (remembered in the database, and in the bot's m.direct account data as clients
// expect); created only when needed and none is usable, so an owner who opens a DM before the bot
// first starts never gets a second room.
import type { MatrixClient } from 'matrix-bot-sdk';
import type { Logger } from '../../src/log.ts';
import type { MatrixStateStore } from './state-store.ts';

const KEY = 'direct_room';

export interface PrivateRoom {
  /** The room now in use, if there is one yet. */
  current(): string | undefined;
  /** The room now in use, created first when there is none (once, however many ask at once). */
  ensure(): Promise<string>;
  /** Makes `room` the private room from now on (recorded in the database and in m.direct). */
  adopt(room: string): Promise<void>;
}

export interface Member {
  user: string;
  membership: string;
}

/** Why a room the owner invited the bot to is, or is not, the owner's private room. Pure. */
export type DirectInviteVerdict =
  | { adopt: true }
  | { adopt: false; reason: 'not_direct' | 'not_owner' | 'others_present' | 'unreadable' };

export function classifyDirectInvite(invite: {
  isDirect: unknown;
  sender: string;
  owner: string;
  bot: string;
  members: readonly Member[];
  encrypted: boolean;
  canDecrypt: boolean;
}): DirectInviteVerdict {
  if (invite.sender !== invite.owner) return { adopt: false, reason: 'not_owner' };
  if (invite.isDirect !== true) return { adopt: false, reason: 'not_direct' };
  const present = invite.members.filter((m) => m.membership === 'join' || m.membership === 'invite');
  const others = present.some((m) => m.user !== invite.owner && m.user !== invite.bot);
  if (others || !present.some((m) => m.user === invite.owner))
    return { adopt: false, reason: 'others_present' };
  if (invite.encrypted && !invite.canDecrypt) return { adopt: false, reason: 'unreadable' };
  return { adopt: true };
}

export async function privateRoom(
  client: MatrixClient,
  state: MatrixStateStore,
  options: { owner: string; encrypt: boolean; log: Logger },
): Promise<PrivateRoom> {
  const { owner, encrypt, log } = options;
  const directData = async (): Promise<Record<string, string[]>> =>
    client.getAccountData<Record<string, string[]>>('m.direct').catch(() => ({}));
  const remember = async (room: string) => {
    const direct = await directData();
    const others = (direct[owner] ?? []).filter((r) => r !== room);
    await client.setAccountData('m.direct', { ...direct, [owner]: [room, ...others] });
    await state.set(KEY, room);
  };

  let current = await findUsable(client, state, owner, encrypt);
  let creating: Promise<string> | undefined;
  const create = async (): Promise<string> => {
    const room = await client.createRoom({
      invite: [owner],
      is_direct: true,
      preset: 'trusted_private_chat',
      initial_state: encrypt
        ? [{ type: 'm.room.encryption', state_key: '', content: { algorithm: 'm.megolm.v1.aes-sha2' } }]
        : [],
    });
    log.info({ room, encrypted: encrypt }, 'matrix: created the direct room with the owner');
    await remember(room);
    return room;
  };

  return {
    current: () => current,
    async ensure() {
      if (current) return current;
      creating ??= create().finally(() => {
        creating = undefined;
      });
      current = await creating;
      return current;
    },
    async adopt(room) {
      await remember(room);
      current = room;
      log.info({ room }, 'matrix: the owner opened a direct chat; it is the private room now');
    },
  };
}

async function findUsable(
  client: MatrixClient,
  state: MatrixStateStore,
  owner: string,
  encrypt: boolean,
): Promise<string | undefined> {
  const direct: Record<string, string[]> = await client
    .getAccountData<Record<string, string[]>>('m.direct')
    .catch(() => ({}));
  const remembered = await state.get(KEY);
  const candidates = [...new Set([remembered, ...(direct[owner] ?? [])])].filter(
    (room): room is string => typeof room === 'string',
  );
  for (const room of candidates) {
    if (await usable(client, room, owner, encrypt)) {
      if (room !== remembered) await state.set(KEY, room);
      return room;
    }
  }
  return undefined;
}

/** The bot is in it, the owner is in it or invited, and it is readable (not encrypted without E2EE). */
async function usable(client: MatrixClient, room: string, owner: string, encrypt: boolean): Promise<boolean> {
  const membership = async (user: string) =>
    (
      (await client.getRoomStateEvent(room, 'm.room.member', user).catch(() => ({}))) as {
        membership?: string;
      }
    ).membership;
  if ((await membership(await client.getUserId())) !== 'join') return false;
  if (!['join', 'invite'].includes((await membership(owner)) ?? '')) return false;
  if (encrypt) return true;
  const encryption = await client.getRoomStateEvent(room, 'm.room.encryption', '').catch(() => undefined);
  return !encryption;
}
