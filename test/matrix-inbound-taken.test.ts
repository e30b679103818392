// An owner's Matrix event is "taken" (safe for the sync loop to confirm, and marked seen) only once
// the assistant has it in its log. It used to be marked seen as it arrived: a kill before the log
// left it seen, so the homeserver's second delivery after the restart was skipped and the message
// lost. The router runs here with the assistant and the room operations as fakes; so does its
// typing, which overlapping work in one room shares.
import { describe, expect, it } from 'vitest';
import { type InboundDeps, inboundRouter } from '../adapters/matrix/inbound.ts';
import type { StoredPrompt } from '../adapters/matrix/state-store.ts';
import type { DecideResult, HandleHooks, InboundMessage } from '../src/channel/port.ts';
import { createLogger } from '../src/log.ts';

const OWNER = '@owner:hs';

function router(
  handle: (message: InboundMessage, hooks?: HandleHooks) => Promise<void>,
  more: {
    decide?: () => Promise<DecideResult>;
    prompts?: StoredPrompt[];
    send?: () => Promise<unknown>;
    typing?: (room: string, on: boolean) => Promise<void>;
  } = {},
) {
  const seen = new Set<string>();
  const handled: string[] = [];
  const deps = {
    assistant: {
      handle: (message: InboundMessage, _sink: unknown, hooks?: HandleHooks) => {
        handled.push(message.text);
        return handle(message, hooks);
      },
      decide: more.decide,
    },
    owner: OWNER,
    botId: '@bot:hs',
    ops: {
      typing: more.typing ?? (async () => {}),
      encrypted: async () => false,
      encryptionChanged: () => {},
      send: more.send ?? (async () => '$sent'),
    },
    state: {
      seen: async (id: string) => seen.has(id),
      markSeen: async (id: string) => void seen.add(id),
      openPrompts: async () => more.prompts ?? [],
    },
    log: createLogger('silent', []),
    sinkFor: () => async () => {},
    promptsPosted: async () => {},
    typingEveryMs: 60_000,
    decrypts: false,
  } as unknown as InboundDeps;
  const r = inboundRouter(deps);
  const deliver = (id: string, text = 'hello', room = '!room') =>
    r.onEvent(
      'room.event',
      [
        room,
        { event_id: id, type: 'm.room.message', sender: OWNER, content: { msgtype: 'm.text', body: text } },
      ],
      { initial: false, decrypted: false },
    );
  return { deliver, seen, handled };
}

const settled = async (p: Promise<unknown>) =>
  Promise.race([
    p.then(
      () => 'resolved',
      () => 'rejected',
    ),
    new Promise((r) => setTimeout(() => r('pending'), 50)),
  ]);

describe('a Matrix event is taken once it is in the log', () => {
  it('stays unseen and unconfirmed until the assistant accepts it; a second delivery waits for the first', async () => {
    let accept = () => {};
    const t = router((_m, hooks) => {
      accept = () => hooks?.accepted?.();
      return new Promise(() => {}); // the turn runs on
    });
    const first = await t.deliver('$a');
    expect(first).toBeDefined();
    expect(await settled(first?.taken as Promise<void>)).toBe('pending');
    expect(t.seen.has('$a')).toBe(false);
    // The homeserver delivers it again (a batch fetched again): not handed on twice.
    const again = await t.deliver('$a');
    expect(again?.taken).toBe(first?.taken);
    accept();
    expect(await settled(first?.taken as Promise<void>)).toBe('resolved');
    expect(t.seen.has('$a')).toBe(true);
    expect(await t.deliver('$a')).toBeUndefined();
    expect(t.handled).toEqual(['hello']);
  });

  it('a message the assistant could not take in is not marked seen, so its next delivery is handled', async () => {
    let fail = true;
    const t = router(async (_m, hooks) => {
      if (fail) throw new Error('database unreachable');
      hooks?.accepted?.();
    });
    const first = await t.deliver('$b');
    expect(await settled(first?.taken as Promise<void>)).toBe('rejected');
    expect(t.seen.has('$b')).toBe(false);
    fail = false;
    const again = await t.deliver('$b');
    expect(await settled(again?.taken as Promise<void>)).toBe('resolved');
    expect(t.seen.has('$b')).toBe(true);
    expect(t.handled).toEqual(['hello', 'hello']);
  });

  it('a typed answer to a question is taken once recorded, not once the resumed turn is done', async () => {
    const prompt = { eventId: '$p', requestId: 'r1', turnRoom: '!room', promptRoom: '!room' } as StoredPrompt;
    const t = router(async () => {}, {
      prompts: [prompt],
      decide: async () => ({ ok: true, resumed: new Promise<void>(() => {}) }),
    });
    const answer = await t.deliver('$c', 'once');
    expect(await settled(answer?.taken as Promise<void>)).toBe('resolved');
    expect(t.seen.has('$c')).toBe(true);
    expect(t.handled).toEqual([]);
  });

  it('a reply of the channel’s own that cannot be sent is still taken, not fetched again and again', async () => {
    const t = router(async () => {}, {
      send: async () => {
        throw new Error('M_TOO_LARGE');
      },
    });
    const usage = await t.deliver('$d', '!output');
    expect(await settled(usage?.taken as Promise<void>)).toBe('resolved');
    expect(t.seen.has('$d')).toBe(true);
  });
});

describe('typing in a room', () => {
  it('stays on while a turn runs there, though a decision for that room ends meanwhile', async () => {
    const notices: string[] = [];
    let endTurn = () => {};
    const prompt = { eventId: '$p', requestId: 'r1', turnRoom: '!room', promptRoom: '!dm' } as StoredPrompt;
    const t = router(
      (_m, hooks) => {
        hooks?.accepted?.();
        return new Promise<void>((resolve) => {
          endTurn = resolve;
        });
      },
      {
        prompts: [prompt],
        decide: async () => ({ ok: true, resumed: Promise.resolve() }),
        typing: async (room, on) => void notices.push(`${room}:${on}`),
      },
    );
    const turn = await t.deliver('$m', 'hello');
    await turn?.taken;
    const answer = await t.deliver('$a', 'once', '!dm');
    await answer?.taken;
    await new Promise((r) => setTimeout(r, 20));
    expect(notices).toEqual(['!room:true', '!room:true']);
    endTurn();
    await new Promise((r) => setTimeout(r, 20));
    expect(notices).toEqual(['!room:true', '!room:true', '!room:false']);
  });
});
