// Services (MCP servers, the digest engine) start behind the channels' first polls: once every
// channel is up, after a bounded wait, and not at all when steward stops first.
import { describe, expect, it } from 'vitest';
import { afterChannelsUp } from '../cli/run-channels.ts';

const later = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('afterChannelsUp', () => {
  it('waits for every channel', async () => {
    const order: string[] = [];
    const up = [later(30).then(() => order.push('a up')), later(80).then(() => order.push('b up'))];
    const started = performance.now();
    const go = await afterChannelsUp(
      up.map((p) => p.then(() => {})),
      5_000,
      new AbortController().signal,
    );
    order.push('services');
    expect(go).toBe(true);
    expect(order).toEqual(['a up', 'b up', 'services']);
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it('starts them after the wait when a channel never comes up', async () => {
    const started = performance.now();
    expect(await afterChannelsUp([new Promise<void>(() => {})], 60, new AbortController().signal)).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
  });

  it('answers false at once when steward stops first', async () => {
    const stop = new AbortController();
    const waiting = afterChannelsUp([new Promise<void>(() => {})], 60_000, stop.signal);
    stop.abort();
    expect(await waiting).toBe(false);
  });

  it('answers false when steward has already stopped', async () => {
    const stop = new AbortController();
    stop.abort();
    expect(await afterChannelsUp([new Promise<void>(() => {})], 60_000, stop.signal)).toBe(false);
  });

  it('with no channels, goes on at once', async () => {
    expect(await afterChannelsUp([], 60_000, new AbortController().signal)).toBe(true);
  });
});
