// A streamed Telegram message whose final edit fails is not reported as shown: the turn view then
// tells the core the reply was not delivered, and the ledger posts it late (found by npm run faults,
// where a reset editMessageText left the streamed text in place and the reply counted as delivered).
import { describe, expect, it } from 'vitest';
import { liveMessage } from '../adapters/telegram/live-message.ts';
import type { TelegramOut } from '../adapters/telegram/telegram-out.ts';

function fakeOut(editResults: boolean[]): TelegramOut {
  return {
    send: async () => ({ ok: true, messageId: 1 }),
    pace: async () => {},
    edit: async () => editResults.shift() ?? true,
    editCaption: async () => true,
    sendDocument: async () => ({ ok: true, messageId: 2 }),
    typing: async () => true,
    answer: async () => {},
  };
}

describe('liveMessage.settle', () => {
  it('says false when the final edit failed, and true when it went through', async () => {
    const failing = liveMessage(fakeOut([false]), 7);
    failing.update('stream');
    await failing.idle();
    expect(await failing.settle('<b>final</b>')).toBe(false);

    const working = liveMessage(fakeOut([true]), 7);
    working.update('stream');
    await working.idle();
    expect(await working.settle('<b>final</b>')).toBe(true);
  });
});
