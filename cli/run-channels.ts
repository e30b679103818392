import type { Channel } from '../src/channel/port.ts';
import { type Scheduler, startScheduler } from '../src/scheduler/index.ts';
import type { Db } from '../src/store/db.ts';
import { buildAssistant } from './build-assistant.ts';
import type { Runtime } from './runtime.ts';

/**
 * Runs channels against one assistant, with the digest scheduler posting into them, until the
 * signal aborts or every channel's input ends.
 */
export async function runChannels(
  runtime: Runtime,
  db: Db,
  channels: Channel[],
  owners: Record<string, string>,
  signal: AbortSignal,
): Promise<void> {
  const { config, log } = runtime;
  let scheduler: Scheduler | undefined;
  const built = await buildAssistant(runtime, db, owners, (text, from) =>
    scheduler
      ? scheduler.command(text, from)
      : Promise.resolve('The scheduler is starting; try again in a moment.'),
  );
  const byName = new Map(channels.map((c) => [c.name, c]));
  try {
    scheduler = await startScheduler({
      db,
      log,
      assistant: built.assistant,
      channels: channels.map((c) => c.name),
      outboxFor: (channel, room) => byName.get(channel)?.outbox(room),
      ownerSink: (channel) => {
        const target = byName.get(channel);
        const room = target?.ownerRoom?.();
        return room === undefined ? undefined : target?.outbox(room);
      },
      skills: new Set(built.skills.map((s) => s.name)),
      ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
      ...(config.digests ? { config: config.digests } : {}),
    });
    // One channel failing (a refused token, another poller) stops the others before the store closes.
    const all = new AbortController();
    const forward = () => all.abort();
    signal.addEventListener('abort', forward, { once: true });
    const runs = channels.map((channel) =>
      channel.run(built.assistant, all.signal).catch((error: unknown) => {
        all.abort();
        throw error;
      }),
    );
    const settled = await Promise.allSettled(runs);
    signal.removeEventListener('abort', forward);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  } finally {
    await scheduler?.stop();
    built.stop();
  }
}
