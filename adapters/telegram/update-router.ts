// One update in, the right call on the core out. Only the owner's private chat is heard: anyone
// else's message is dropped here (logged, rate-limited) and never reaches the core; button presses
// go to the core, which is the one that decides who may decide, and every press is answered.
import type { Update } from 'grammy/types';
import type { ChannelPort, HandleHooks, ReplySink } from '../../src/channel/port.ts';
import { decodeButton } from './callback-data.ts';
import { escapeHtml } from './html.ts';
import { type TelegramFiles, telegramInbound } from './inbound-files.ts';
import { deliverOutput } from './output-delivery.ts';
import type { PromptRegistry } from './prompt-registry.ts';
import { promptPlan } from './prompt-view.ts';
import type { StrangerLog } from './stranger-log.ts';
import type { TelegramOut } from './telegram-out.ts';
import { turnView } from './turn-view.ts';
import { startTyping } from './typing.ts';

export const TELEGRAM_CHANNEL = 'telegram';
const OUTPUT_HELP = '/output <ref> – a stored tool output, whole, as a file';

export interface UpdateRouterDeps {
  assistant: ChannelPort;
  out: TelegramOut;
  ownerId: string;
  prompts: PromptRegistry;
  strangers: StrangerLog;
  /** Where the files of the owner's messages are fetched from (the configured Bot API root). */
  files: TelegramFiles;
  typingEveryMs?: number;
}

const DECIDED: Record<string, string> = {
  once: 'Allowed once.',
  session: 'Allowed for this session.',
  deny: 'Denied.',
};

/** `/cost@steward_bot args` → `/cost args`: the core knows commands by their bare names. */
export function normalizeCommand(text: string): { command?: string; text: string } {
  const m = /^\/([A-Za-z0-9_]+)(?:@[A-Za-z0-9_]+)?(?=\s|$)/.exec(text);
  if (!m) return { text };
  const command = (m[1] as string).toLowerCase();
  return { command, text: `/${command}${text.slice(m[0].length)}` };
}

/**
 * Handles one update; resolves when it is done. `hooks.accepted` fires earlier once the update is
 * safe (a message in the event log, a decision recorded): a webhook answers Telegram there.
 */
export type UpdateHandler = (update: Update, hooks?: HandleHooks) => Promise<void>;

export function updateRouter(deps: UpdateRouterDeps): UpdateHandler {
  const { assistant, out, ownerId, prompts, strangers } = deps;
  const view = (chatId: number) => turnView({ out, chatId, ownerId, prompts });

  const onMessage = async (message: NonNullable<Update['message']>, hooks?: HandleHooks) => {
    const senderId = String(message.from?.id ?? message.sender_chat?.id ?? 'unknown');
    if (message.chat.type !== 'private' || senderId !== ownerId) {
      strangers.note(
        senderId,
        message.chat.type === 'private'
          ? 'a message (not the owner)'
          : `a message in a ${message.chat.type} chat (only the private chat with the owner is heard)`,
      );
      return;
    }
    const chatId = message.chat.id;
    const inbound = telegramInbound(message, deps.files);
    const nothing = inbound.text === '' && inbound.attachments.length === 0 && !inbound.quote;
    // Something steward has no reader for at all (a service message, a game): said, not ignored.
    if (nothing && !inbound.unsupported) inbound.unsupported = 'this kind of message';
    const { command, text } = normalizeCommand(inbound.text);
    if (command === 'output') {
      const ref = text.split(/\s+/)[1];
      if (!ref) {
        await out.send(
          chatId,
          'Usage: <code>/output &lt;ref&gt;</code>, with the ref from a stored-output line.',
        );
        return;
      }
      const result = await deliverOutput(
        { assistant, out, channel: TELEGRAM_CHANNEL },
        { chatId, senderId, ref },
      );
      if (!result.ok) await out.send(chatId, escapeHtml(result.text));
      return;
    }
    const turn = view(chatId);
    // The core's command list, plus the one command this channel adds.
    const help = command === 'help' || command === 'start';
    const sink: ReplySink = (event) =>
      turn.sink(help && event.type === 'reply' ? { ...event, text: `${event.text}\n${OUTPUT_HELP}` } : event);
    const stopTyping = startTyping(out, chatId, deps.typingEveryMs);
    // Called before anything is awaited, so messages reach the core in the order they arrived.
    const handled = assistant.handle(
      {
        channel: TELEGRAM_CHANNEL,
        room: String(chatId),
        senderId,
        text,
        id: String(message.message_id),
        ...(inbound.attachments.length > 0 ? { attachments: inbound.attachments } : {}),
        ...(inbound.quote ? { quote: inbound.quote } : {}),
        ...(inbound.unsupported ? { unsupported: inbound.unsupported } : {}),
      },
      sink,
      hooks,
    );
    try {
      await handled;
    } finally {
      stopTyping();
      await turn.finish();
    }
  };

  const onPress = async (query: NonNullable<Update['callback_query']>, hooks?: HandleHooks) => {
    const senderId = String(query.from.id);
    let answered = false;
    const answer = async (text: string) => {
      if (answered) return;
      answered = true;
      await out.answer(query.id, text);
    };
    const action = decodeButton(query.data);
    const chatId = query.message?.chat.id ?? query.from.id;
    if (senderId !== ownerId) strangers.note(senderId, 'a button press (not the owner)');
    if (!action) {
      await answer('This button is not one of mine, or no longer valid.');
      return;
    }
    if (action.kind === 'output') {
      if (senderId === ownerId) void answer('Sending the whole output as a file…');
      const result = await deliverOutput(
        { assistant, out, channel: TELEGRAM_CHANNEL },
        { chatId, senderId, ref: action.ref },
      );
      await answer(result.text);
      if (!result.ok && senderId === ownerId) await out.send(chatId, escapeHtml(result.text));
      return;
    }
    const { requestId, decision } = action;
    // After a restart the prompt's message is known from the press: re-derive how it looked.
    const messageId = query.message?.message_id;
    if (senderId === ownerId && messageId !== undefined && !prompts.get(requestId)) {
      const pending = await assistant.pendingPrompts(TELEGRAM_CHANNEL, String(chatId));
      const prompt = pending.find((p) => p.requestId === requestId);
      if (prompt) {
        const plan = promptPlan(prompt);
        const caption = query.message !== undefined && 'document' in query.message;
        const html = plan.kind === 'message' ? plan.html : caption ? plan.caption : plan.fallback.html;
        prompts.remember(requestId, { chatId, messageId, html, caption });
      }
    }
    const turn = view(chatId);
    let stopTyping = () => {};
    const sink: ReplySink = async (event) => {
      if (event.type === 'permission_settled' && event.requestId === requestId) {
        hooks?.accepted?.();
        void answer(DECIDED[event.decision] ?? 'Done.');
        stopTyping = startTyping(out, chatId, deps.typingEveryMs);
      }
      // The reply's delivery goes back to the core's ledger.
      return turn.sink(event);
    };
    try {
      const result = await assistant.decide(
        { requestId, decision, channel: TELEGRAM_CHANNEL, senderId },
        sink,
      );
      // Acknowledged as soon as the decision is recorded; the resumed turn runs after.
      await answer(result.ok ? (DECIDED[decision] ?? 'Done.') : result.text);
      if (result.ok) await result.resumed;
    } finally {
      stopTyping();
      await turn.finish();
    }
  };

  return async (update, hooks) => {
    if (update.message) await onMessage(update.message, hooks);
    else if (update.callback_query) await onPress(update.callback_query, hooks);
  };
}
