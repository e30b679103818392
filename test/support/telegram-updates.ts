// Updates as Telegram sends them to a private chat, and a short poll-until, for the polling suites.
import type { Update } from 'grammy/types';

export const update = (id: number, text = `m${id}`): Update =>
  ({
    update_id: id,
    message: { message_id: id, date: 0, chat: { id: 1, type: 'private', first_name: 'o' }, text },
  }) as Update;

export const wait = async (check: () => boolean, what: string, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};
