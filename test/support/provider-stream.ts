import { expect } from 'vitest';
import type { ProviderEvent } from '../../src/gateway/types.ts';

/**
 * Drains a stream, asserting the contract every provider stream keeps: iteration never throws, and
 * the last event is the one and only terminal event (`done` or `error`).
 */
export async function drain(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  let thrown: unknown;
  try {
    for await (const event of stream) events.push(event);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeUndefined();
  expectOneTerminal(events);
  return events;
}

export function expectOneTerminal(events: ProviderEvent[]): void {
  const terminal = events.filter((e) => e.type === 'done' || e.type === 'error');
  expect(terminal).toHaveLength(1);
  expect(events.at(-1)).toBe(terminal[0]);
}
