// A /digest command that arrives before the scheduler is up (sent while steward was down, it
// comes with the first poll) waits for it, bounded, and never hangs a stopping steward.
import { describe, expect, it } from 'vitest';
import { digestWhenUp, SCHEDULER_STARTING } from '../cli/run-channels.ts';
import type { Scheduler } from '../src/scheduler/index.ts';

const later = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const from = { channel: 'console', room: 'owner' };
const answering = (answer: string) => ({ command: async () => answer }) as unknown as Scheduler;

describe('digestWhenUp', () => {
  it('waits for the scheduler, then lets it answer', async () => {
    const up = Promise.withResolvers<void>();
    let scheduler: Scheduler | undefined;
    const command = digestWhenUp(up.promise, () => scheduler, 5_000, new AbortController().signal);
    const answer = command('/digest list', from);
    await later(30);
    scheduler = answering('2 digests');
    up.resolve();
    expect(await answer).toBe('2 digests');
  });

  it('says the scheduler is starting when it is not up within the wait', async () => {
    const started = performance.now();
    const command = digestWhenUp(
      new Promise<void>(() => {}),
      () => undefined,
      60,
      new AbortController().signal,
    );
    expect(await command('/digest list', from)).toBe(SCHEDULER_STARTING);
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
  });

  it('answers at once when steward is stopping', async () => {
    const stop = new AbortController();
    const command = digestWhenUp(new Promise<void>(() => {}), () => undefined, 60_000, stop.signal);
    const answer = command('/digest list', from);
    stop.abort();
    expect(await answer).toBe(SCHEDULER_STARTING);
  });

  it("passes on the scheduler's own answer, undefined for what is not a digest command", async () => {
    const quiet = { command: async () => undefined } as unknown as Scheduler;
    const command = digestWhenUp(Promise.resolve(), () => quiet, 60_000, new AbortController().signal);
    expect(await command('/digest nonsense', from)).toBeUndefined();
  });

  it('a scheduler that could not start (up, but unset) gets the same answer', async () => {
    const command = digestWhenUp(Promise.resolve(), () => undefined, 60_000, new AbortController().signal);
    expect(await command('/digest list', from)).toBe(SCHEDULER_STARTING);
  });
});
