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
  const full = `${label}${signed}`.replace(/\s+/g, ' ').trim();
  return full.length > MAX_LABEL ? `${full.slice(0, MAX_LABEL - 1)}…` : full;
}
