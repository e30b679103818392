// Every call the channel makes to the Bot API goes through here: failures become results (logged,
// never thrown into a turn), HTML Telegram cannot parse is sent again as plain text, and edits in
// one chat are paced to about one a second.
import { type Api, GrammyError } from 'grammy';
import type { InlineKeyboardMarkup } from 'grammy/types';
import type { Logger } from '../../src/log.ts';
import { htmlToPlain } from './html.ts';
import { type DocumentSpec, documentPayload, typingPayload } from './payloads.ts';

export type Sent = { ok: true; messageId: number } | { ok: false; reason: string };

export interface TelegramOut {
  send(chatId: number, html: string, keyboard?: InlineKeyboardMarkup): Promise<Sent>;
  /** Waits for this chat's next edit slot (about one a second); call it before `edit`. */
  pace(chatId: number): Promise<void>;
  /** Replaces a message's text (and buttons; an empty keyboard removes them). */
  edit(chatId: number, messageId: number, html: string, keyboard?: InlineKeyboardMarkup): Promise<boolean>;
  /** The same for the caption of a file. */
  editCaption(
    chatId: number,
    messageId: number,
    html: string,
    keyboard?: InlineKeyboardMarkup,
  ): Promise<boolean>;
  sendDocument(chatId: number, spec: DocumentSpec): Promise<Sent>;
  typing(chatId: number): Promise<boolean>;
  answer(callbackQueryId: string, text: string): Promise<void>;
}

/** One line for the operator (and, where useful, the owner) about a failed call. */
export function describeApiError(error: unknown): string {
  if (error instanceof GrammyError) {
    return error.description
      ? `${error.error_code}: ${error.description}`
      : `${error.method} failed (${error.message})`;
  }
  return error instanceof Error ? error.message : String(error);
}

const unparsable = (error: unknown) =>
  error instanceof GrammyError && error.error_code === 400 && /can't parse entities/i.test(error.description);
const unchanged = (error: unknown) =>
  error instanceof GrammyError && /message is not modified/i.test(error.description ?? '');

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function telegramOut(api: Api, log: Logger, editIntervalMs = 1000): TelegramOut {
  const nextEdit = new Map<number, number>();
  /** Waits for this chat's next edit slot; a send counts too, so an edit never follows it at once. */
  const pace = async (chatId: number, send = false) => {
    const now = Date.now();
    const at = Math.max(now, nextEdit.get(chatId) ?? 0);
    if (send) {
      nextEdit.set(chatId, Math.max(at, now + editIntervalMs));
      return;
    }
    nextEdit.set(chatId, at + editIntervalMs);
    if (at > now) await sleep(at - now);
  };
  const failed = (method: string, error: unknown) => {
    const reason = describeApiError(error);
    log.warn({ method }, `telegram: ${method} failed: ${reason}`);
    return reason;
  };
  /** Runs `call` with HTML, and once more as plain text if Telegram cannot parse the HTML. */
  const withFallback = async <T>(
    html: string,
    call: (text: string, html: boolean) => Promise<T>,
  ): Promise<T> => {
    try {
      return await call(html, true);
    } catch (error) {
      if (!unparsable(error)) throw error;
      log.warn(`telegram: could not parse our HTML (${describeApiError(error)}); sent as plain text`);
      return await call(htmlToPlain(html), false);
    }
  };
  const mode = (html: boolean) => (html ? { parse_mode: 'HTML' as const } : {});
  const markup = (keyboard?: InlineKeyboardMarkup) => (keyboard ? { reply_markup: keyboard } : {});

  return {
    async send(chatId, html, keyboard) {
      await pace(chatId, true);
      try {
        const message = await withFallback(html, (text, isHtml) =>
          api.raw.sendMessage({
            chat_id: chatId,
            text,
            ...mode(isHtml),
            link_preview_options: { is_disabled: true },
            ...markup(keyboard),
          }),
        );
        return { ok: true, messageId: message.message_id };
      } catch (error) {
        return { ok: false, reason: failed('sendMessage', error) };
      }
    },

    pace: (chatId) => pace(chatId),

    async edit(chatId, messageId, html, keyboard) {
      try {
        await withFallback(html, (text, isHtml) =>
          api.raw.editMessageText({
            chat_id: chatId,
            message_id: messageId,
            text,
            ...mode(isHtml),
            link_preview_options: { is_disabled: true },
            ...markup(keyboard),
          }),
        );
        return true;
      } catch (error) {
        if (unchanged(error)) return true;
        failed('editMessageText', error);
        return false;
      }
    },

    async editCaption(chatId, messageId, html, keyboard) {
      try {
        await withFallback(html, (caption, isHtml) =>
          api.raw.editMessageCaption({
            chat_id: chatId,
            message_id: messageId,
            caption,
            ...mode(isHtml),
            ...markup(keyboard),
          }),
        );
        return true;
      } catch (error) {
        if (unchanged(error)) return true;
        failed('editMessageCaption', error);
        return false;
      }
    },

    async sendDocument(chatId, spec) {
      await pace(chatId, true);
      try {
        const message = await api.raw.sendDocument(documentPayload(chatId, spec));
        return { ok: true, messageId: message.message_id };
      } catch (error) {
        return { ok: false, reason: failed('sendDocument', error) };
      }
    },

    async typing(chatId) {
      try {
        await api.raw.sendChatAction(typingPayload(chatId));
        return true;
      } catch (error) {
        log.debug({ method: 'sendChatAction' }, `telegram: no typing indicator: ${describeApiError(error)}`);
        return false;
      }
    },

    async answer(callbackQueryId, text) {
      try {
        await api.raw.answerCallbackQuery({ callback_query_id: callbackQueryId, text: text.slice(0, 200) });
      } catch (error) {
        failed('answerCallbackQuery', error);
      }
    },
  };
}
