// The owner's private room: a direct room between the bot and the owner, where prompts and
// notices go. Found again after a restart (remembered in the database, and in the bot's m.direct
// account data as clients expect); created when there is none usable.
import type { MatrixClient } from 'matrix-bot-sdk';
import type { Logger } from '../../src/log.ts';
import type { MatrixStateStore } from './state-store.ts';

const KEY = 'direct_room';

export async function ensureDirectRoom(
  client: MatrixClient,
  state: MatrixStateStore,
  options: { owner: string; encrypt: boolean; log: Logger },
): Promise<string> {
  const { owner, encrypt, log } = options;
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
  const room = await client.createRoom({
    invite: [owner],
    is_direct: true,
    preset: 'trusted_private_chat',
    initial_state: encrypt
      ? [{ type: 'm.room.encryption', state_key: '', content: { algorithm: 'm.megolm.v1.aes-sha2' } }]
      : [],
  });
  log.info({ room, encrypted: encrypt }, 'matrix: created the direct room with the owner');
  await client.setAccountData('m.direct', { ...direct, [owner]: [room, ...(direct[owner] ?? [])] });
  await state.set(KEY, room);
  return room;
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
