// Who wrote a message the owner forwarded or quoted from another chat, as a fence source. Pure.
// Names are what their owners chose, so they are cut short; the fence escapes the rest.
import type { MessageOrigin } from 'grammy/types';

const MAX_LABEL = 120;

function person(user: { first_name: string; last_name?: string; username?: string }): string {
  const name = [user.first_name, user.last_name].filter(Boolean).join(' ');
  return user.username ? `${name} (@${user.username})` : name;
}

function chatName(chat: { title?: string; username?: string; first_name?: string }): string {
  const title = chat.title ?? chat.first_name ?? 'untitled';
  return chat.username ? `${title} (@${chat.username})` : title;
}

/**
 * Fields of a forward from before Bot API 7.0 (`forward_origin`), which older self-hosted Bot API
 * servers and some emulators still send instead: a forward is told by any of them.
 */
export interface LegacyForward {
  forward_from?: { first_name: string; last_name?: string; username?: string };
  forward_from_chat?: { title?: string; username?: string; first_name?: string };
  forward_sender_name?: string;
  forward_signature?: string;
  forward_date?: number;
}

/** Who wrote a forward, from `forward_origin` or the legacy fields; undefined when it is none. */
export function forwardLabel(
  message: { forward_origin?: MessageOrigin } & LegacyForward,
): string | undefined {
  if (message.forward_origin) return originLabel(message.forward_origin);
  if (message.forward_from)
    return originLabel({
      type: 'user',
      date: 0,
      sender_user: { id: 0, is_bot: false, ...message.forward_from },
    });
  if (message.forward_from_chat)
    return cut(
      `the chat ${chatName(message.forward_from_chat)}${message.forward_signature ? `, signed ${message.forward_signature}` : ''}`,
    );
  if (message.forward_sender_name)
    return originLabel({ type: 'hidden_user', date: 0, sender_user_name: message.forward_sender_name });
  if (message.forward_date !== undefined) return 'an unknown sender';
  return undefined;
}

const cut = (label: string) => {
  const full = label.replace(/\s+/g, ' ').trim();
  return full.length > MAX_LABEL ? `${full.slice(0, MAX_LABEL - 1)}…` : full;
};

export function originLabel(origin: MessageOrigin): string {
  let label: string;
  switch (origin.type) {
    case 'user':
      label = person(origin.sender_user);
      break;
    case 'hidden_user':
      label = `${origin.sender_user_name} (hidden account)`;
      break;
    case 'chat':
      label = `the chat ${chatName(origin.sender_chat)}`;
      break;
    case 'channel':
      label = `the channel ${chatName(origin.chat)}`;
      break;
  }
  const signed =
    'author_signature' in origin && origin.author_signature ? `, signed ${origin.author_signature}` : '';
  return cut(`${label}${signed}`);
}
