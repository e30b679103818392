// One message that is sent once and then edited as its text grows (a streamed reply, the tool
// status line). Updates coalesce: however many arrive, the chat sees at most one edit per slot,
// always the newest text, and the text is never sent as a second message.
import type { InlineKeyboardMarkup } from 'grammy/types';
import type { TelegramOut } from './telegram-out.ts';

export interface LiveMessage {
  /** Shows `html` soon; returns at once. */
  update(html: string, keyboard?: InlineKeyboardMarkup): void;
  /** Shows `html` and resolves once it is shown (true) or could not be (false). */
  settle(html: string, keyboard?: InlineKeyboardMarkup): Promise<boolean>;
  /** The message's id once it exists. */
  id(): number | undefined;
  /** Resolves once the message exists (or its sending failed), so later messages come below it. */
  ready(): Promise<void>;
  /** Resolves when nothing is pending. */
  idle(): Promise<void>;
}

export function liveMessage(out: TelegramOut, chatId: number): LiveMessage {
  let messageId: number | undefined;
  let sendFailed = false;
  let editFailed = false;
  let shown = '';
  let wanted = '';
  let keyboard: InlineKeyboardMarkup | undefined;
  let shownKeyboard: InlineKeyboardMarkup | undefined;
  let running: Promise<void> | undefined;
  let created: Promise<void> | undefined;
  let markCreated = () => {};

  const pending = () => !sendFailed && (wanted !== shown || keyboard !== shownKeyboard);

  const pump = async () => {
    while (pending()) {
      if (messageId === undefined) {
        const html = wanted;
        const buttons = keyboard;
        const sent = await out.send(chatId, html, buttons);
        markCreated();
        if (!sent.ok) {
          sendFailed = true;
          return;
        }
        messageId = sent.messageId;
        shown = html;
        shownKeyboard = buttons;
      } else {
        await out.pace(chatId);
        // The newest text, read after the wait; a failed edit is not repeated for the same text.
        const html = wanted;
        const buttons = keyboard;
        // A failed edit is remembered, so `settle` does not call a final text shown that is not.
        editFailed = !(await out.edit(chatId, messageId, html, buttons));
        shown = html;
        shownKeyboard = buttons;
      }
    }
  };
  const kick = () => {
    if (running) return;
    running = pump().finally(() => {
      running = undefined;
      if (pending()) kick();
    });
  };
  const set = (html: string, buttons?: InlineKeyboardMarkup) => {
    if (!created) created = new Promise<void>((resolve) => (markCreated = resolve));
    wanted = html;
    if (buttons !== undefined) keyboard = buttons;
  };
  const idle = async () => {
    while (running) await running;
  };

  return {
    update(html, buttons) {
      set(html, buttons);
      kick();
    },
    async settle(html, buttons) {
      set(html, buttons);
      // The last word gets one more try even if the first send failed.
      if (sendFailed && messageId === undefined) sendFailed = false;
      kick();
      await idle();
      return !sendFailed && !editFailed && shown === html;
    },
    id: () => messageId,
    ready: () => created ?? Promise.resolve(),
    idle,
  };
}
