// What the channel bench runs steward against: the Bot API emulator behind the long-poll shim, and
// the scripted model answering every message at once with `pong <marker> done`. Everything is
// timestamped on this process's clock (performance.now()).
import { startLongPollShim } from '../../test/support/long-poll-shim.ts';
import { reply, startScriptedModel } from '../../test/support/scripted-model.ts';
import { startTelegramEmulator } from '../../test/support/telegram-emulator.ts';

export const OWNER_ID = 4242;

/** The marker of a bench message, as the model finds it in the last user message. */
const MARKER = /q\d+/g;

export async function startRig() {
  const emulator = await startTelegramEmulator();
  const shim = await startLongPollShim({ upstream: emulator.apiRoot, events: emulator.server });
  /** marker -> when the model was asked (and answered: the scripted reply is written at once). */
  const answered = new Map<string, number>();
  const model = await startScriptedModel((body) => {
    const messages = (body.messages as Array<{ role: string }> | undefined) ?? [];
    const last = [...messages].reverse().find((m) => m.role === 'user');
    const marker =
      JSON.stringify(last ?? '')
        .match(MARKER)
        ?.pop() ?? 'none';
    answered.set(marker, performance.now());
    return reply(`pong ${marker} done`);
  });
  const owner = emulator.user(OWNER_ID);
  let next = 0;
  let scanned = 0;
  const replied = new Map<string, number>();
  /** The first time the bot sent or edited a message to hold the whole reply to `marker`. */
  const replyAt = (marker: string): number | undefined => {
    for (; scanned < shim.calls.length; scanned++) {
      const call = shim.calls[scanned];
      if (!call || (call.method !== 'sendMessage' && call.method !== 'editMessageText')) continue;
      const found = String(call.payload.text ?? '').match(/pong (q\d+) done/);
      if (found?.[1] && !replied.has(found[1])) replied.set(found[1], call.at);
    }
    return replied.get(marker);
  };
  const deliveredAt = (marker: string): number | undefined =>
    shim.deliveries.find((d) => d.updates.some((u) => u.message?.text === `hello ${marker}`))?.at;
  return {
    shim,
    env: {
      STEWARD_MODEL_BASE_URL: model.baseUrl,
      STEWARD_MODEL: 'test-model',
      STEWARD_TELEGRAM_TOKEN: emulator.token,
      STEWARD_TELEGRAM_OWNER_ID: String(OWNER_ID),
      STEWARD_TELEGRAM_API_ROOT: shim.apiRoot,
      STEWARD_LOG_LEVEL: 'warn',
    },
    /** Sends `hello qN` from the owner; returns the marker and when it was sent. */
    async say(): Promise<{ marker: string; sentAt: number }> {
      const marker = `q${next++}`;
      const sentAt = performance.now();
      await owner.say(`hello ${marker}`);
      return { marker, sentAt };
    },
    replyAt,
    deliveredAt,
    answeredAt: (marker: string) => answered.get(marker),
    /** How many messages in the chat hold the reply to `marker` (one, or the reply was doubled). */
    replyMessages: (marker: string) =>
      emulator.botMessages(OWNER_ID).filter((m) => m.text.includes(`pong ${marker} done`)).length,
    /** The markers of the replies in the order their messages were created. */
    replyOrder: () =>
      emulator
        .botMessages(OWNER_ID)
        .map((m) => m.text.match(/pong (q\d+) done/)?.[1])
        .filter((m): m is string => m !== undefined),
    async close() {
      await shim.close();
      await model.close();
      await emulator.stop();
    },
  };
}

export type Rig = Awaited<ReturnType<typeof startRig>>;

export async function until<T>(
  check: () => T | undefined,
  what: string | (() => string),
  timeoutMs: number,
  everyMs = 5,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (performance.now() > deadline)
      throw new Error(`channel bench: timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
