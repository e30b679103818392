import { describe, expect, it } from 'vitest';
import { orderedNotices } from '../adapters/matrix/typing-notices.ts';

/** A send whose calls stay open until the test lets them finish, in the order they were made. */
function heldSend() {
  const sent: string[] = [];
  const open: Array<() => void> = [];
  const send = (room: string, on: boolean) =>
    new Promise<void>((resolve) => {
      sent.push(`${room}:${on}`);
      open.push(resolve);
    });
  const finishOne = async () => {
    open.shift()?.();
    await new Promise((r) => setImmediate(r));
  };
  return { sent, send, finishOne, openCount: () => open.length };
}

describe('typing notices', () => {
  it('sends "stopped" only after a slow "typing" is answered, so the last word is the last state', async () => {
    const h = heldSend();
    const notice = orderedNotices(h.send);
    void notice('!a', true);
    void notice('!a', false);
    expect(h.sent).toEqual(['!a:true']);
    await h.finishOne();
    expect(h.sent).toEqual(['!a:true', '!a:false']);
    await h.finishOne();
    expect(h.openCount()).toBe(0);
  });

  it('sends only the newest of the notices that waited', async () => {
    const h = heldSend();
    const notice = orderedNotices(h.send);
    const first = notice('!a', true);
    const waiting = [notice('!a', true), notice('!a', false), notice('!a', true), notice('!a', false)];
    await h.finishOne();
    await h.finishOne();
    await Promise.all([first, ...waiting]);
    expect(h.sent).toEqual(['!a:true', '!a:false']);
  });

  it('keeps rooms apart, and a room is free again once its notices are out', async () => {
    const h = heldSend();
    const notice = orderedNotices(h.send);
    const a = notice('!a', true);
    const b = notice('!b', true);
    expect(h.sent).toEqual(['!a:true', '!b:true']);
    await h.finishOne();
    await h.finishOne();
    await Promise.all([a, b]);
    const again = notice('!a', false);
    expect(h.sent).toEqual(['!a:true', '!b:true', '!a:false']);
    await h.finishOne();
    await again;
  });

  it('sends the waiting notice after one that failed', async () => {
    const sent: boolean[] = [];
    const notice = orderedNotices(async (_room, on) => {
      sent.push(on);
      await new Promise((r) => setImmediate(r));
      if (on) throw new Error('homeserver away');
    });
    await Promise.all([notice('!a', true), notice('!a', false)]);
    expect(sent).toEqual([true, false]);
  });

  it('is not held by a send that throws at once', async () => {
    const sent: boolean[] = [];
    const notice = orderedNotices((_room, on) => {
      sent.push(on);
      if (on) throw new Error('thrown before any promise');
      return Promise.resolve();
    });
    await notice('!a', true);
    await notice('!a', false);
    expect(sent).toEqual([true, false]);
  });
});
