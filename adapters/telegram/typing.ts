// "typing…" under the bot's name while a turn runs. Telegram shows it for about five seconds, so
// it is sent again every few seconds until stopped; a server that refuses it is not asked again.
import type { TelegramOut } from './telegram-out.ts';

export function startTyping(out: TelegramOut, chatId: number, everyMs = 4500): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    if (stopped) return;
    const ok = await out.typing(chatId);
    if (!ok || stopped) return;
    timer = setTimeout(() => void tick(), everyMs);
    timer.unref();
  };
  void tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
