// The failures that stop the Telegram channel rather than being retried. Each message is one line
// for the operator: what happened and what to do. The token never appears in them.
import { GrammyError } from 'grammy';

/** Base of the errors that end `run()`; `steward start` prints the message and exits 1. */
export class TelegramChannelError extends Error {
  override name = 'TelegramChannelError';
}

/** 409: another process polls the same token, or a webhook is set for it. */
export class TelegramConflictError extends TelegramChannelError {
  override name = 'TelegramConflictError';
}

/** 401/404: the token is wrong or revoked. */
export class TelegramAuthError extends TelegramChannelError {
  override name = 'TelegramAuthError';
}

/** The channel-ending error an API failure stands for, or undefined when it is worth retrying. */
export function fatalTelegramError(error: unknown): TelegramChannelError | undefined {
  if (!(error instanceof GrammyError)) return undefined;
  const said = error.description ? ` (Telegram said: ${error.description})` : '';
  if (error.error_code === 409) {
    const webhook = /webhook/i.test(error.description ?? '');
    return new TelegramConflictError(
      webhook
        ? `telegram: a webhook is set for this bot, so it cannot poll (409 Conflict)${said}; remove it (deleteWebhook) or stop whatever set it, then start steward again`
        : `telegram: another process is polling this bot token (409 Conflict)${said}; stop the other steward or bot that uses STEWARD_TELEGRAM_TOKEN, then start steward again`,
    );
  }
  if (error.error_code === 401 || error.error_code === 404) {
    return new TelegramAuthError(
      `telegram: the Bot API rejected STEWARD_TELEGRAM_TOKEN (${error.error_code})${said}; copy the token from @BotFather again`,
    );
  }
  return undefined;
}
