// One channel against one core, started and stopped as cli/run-channels.ts does it.
import type { Channel } from '../../src/channel/port.ts';
import type { Assistant } from '../../src/core/assistant.ts';

export async function runChannel(channel: Channel, core: Assistant, signal: AbortSignal): Promise<void> {
  await core.start({ outbox: (name, room) => (name === channel.name ? channel.outbox(room) : undefined) });
  try {
    await channel.run(core, signal);
    if (!signal.aborted) await core.idle();
  } finally {
    await core.stop();
  }
}
