import type { Channel } from '../src/channel/port.ts';
import type { Service } from '../src/core/lifecycle.ts';
import { DEFAULT_LIMITS } from '../src/limits.ts';
import { type DigestCommandContext, type Scheduler, startScheduler } from '../src/scheduler/index.ts';
import type { Db } from '../src/store/db.ts';
import { within } from '../src/within.ts';
import { buildAssistant } from './build-assistant.ts';
import type { Runtime } from './runtime.ts';
import type { StageMark } from './startup-timing.ts';

/**
 * Runs channels against one core, with the digest scheduler posting into them, until the signal
 * aborts or every channel's input ends. The core's lifecycle (recovery, the one sweeper, stopping
 * running turns) is started and stopped here; channels only see the port.
 */
export async function runChannels(
  runtime: Runtime,
  db: Db,
  channels: Channel[],
  owners: Record<string, string>,
  signal: AbortSignal,
  mark: StageMark = () => {},
): Promise<void> {
  const { config, log } = runtime;
  let scheduler: Scheduler | undefined;
  // One channel failing (a refused token, another poller) stops the others before the store closes.
  const all = new AbortController();
  const schedulerUp = Promise.withResolvers<void>();
  const built = await buildAssistant(
    runtime,
    db,
    owners,
    digestWhenUp(schedulerUp.promise, () => scheduler, DEFAULT_LIMITS.servicesWaitMs, all.signal),
  );
  const { assistant } = built;
  mark('assistant built');
  const byName = new Map(channels.map((c) => [c.name, c]));
  /** The owner's private room on each channel that knows it. */
  const ownerSinks = () =>
    channels.flatMap((c) => {
      const room = c.ownerRoom?.();
      const sink = room === undefined ? undefined : c.outbox(room);
      return sink ? [sink] : [];
    });
  const stopAll = () => {
    all.abort();
    // Running turns are told at once, so channels waiting for their handlers can finish.
    void assistant.stop();
  };
  signal.addEventListener('abort', stopAll, { once: true });
  const behindChannels = afterChannelsUp(
    channels.map((c) => assistant.whenOnline(c.name)),
    DEFAULT_LIMITS.servicesWaitMs,
    all.signal,
  );
  try {
    const { services } = await assistant.start({
      outbox: (channel, room) => byName.get(channel)?.outbox(room),
      statusLines: async () => [
        ...channels.map((c) => `${c.name}: ${c.health?.() ?? 'running'}`),
        ...((await scheduler?.status()) ?? []),
      ],
      notifyOwner: async (text) => {
        for (const sink of ownerSinks()) await sink({ type: 'notice', level: 'info', text });
      },
      services: [
        // MCP servers start with steward; the first turn that could use them waits (bounded) for them.
        async () => {
          if (!(await behindChannels)) return NOT_STARTED;
          built.tellOwner(async (line) => {
            for (const sink of ownerSinks()) await sink({ type: 'notice', level: 'error', text: line });
          });
          built.mcp.start();
          return { stop: () => built.mcp.stop() };
        },
        async () => {
          if (!(await behindChannels)) return NOT_STARTED;
          try {
            scheduler = await startScheduler({
              db,
              log,
              assistant,
              channels: channels.map((c) => c.name),
              outboxFor: (channel, room) => byName.get(channel)?.outbox(room),
              // A fire caught up at start waits until its channel can post (Matrix logs in first).
              online: (channel) => assistant.whenOnline(channel),
              ownerSink: (channel) => {
                const target = byName.get(channel);
                const room = target?.ownerRoom?.();
                return room === undefined ? undefined : target?.outbox(room);
              },
              skills: new Set(built.skills.map((s) => s.name)),
              ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
              ...(config.digests ? { config: config.digests } : {}),
            });
            return scheduler;
          } finally {
            // Unset when it could not start: that failure ends steward.
            schedulerUp.resolve();
          }
        },
      ],
    });
    mark('assistant started');
    const ending = (error: unknown) => {
      stopAll();
      throw error;
    };
    // A service that cannot start (the scheduler's database) still ends steward, as a channel would.
    const runs = [
      ...channels.map((channel) => channel.run(assistant, all.signal).catch(ending)),
      services.catch(ending),
    ];
    const settled = await Promise.allSettled(runs);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    // Input ended on its own (a piped console): the turns it started finish before the stop.
    if (!all.signal.aborted) await assistant.idle();
  } finally {
    signal.removeEventListener('abort', stopAll);
    // Services still waiting for the channels (a start that failed) give up at once.
    all.abort();
    await assistant.stop();
    built.stop();
  }
}

const NOT_STARTED: Service = { stop: async () => {} };

export const SCHEDULER_STARTING = 'The scheduler is starting; try again in a moment.';

/**
 * /digest commands, answered by the scheduler. One that comes before the scheduler is up (sent
 * while steward was down, it arrives with the first poll) waits for it, at most `waitMs`, as long
 * as services wait for the channels; the answer then says it is starting.
 */
export function digestWhenUp(
  up: Promise<void>,
  scheduler: () => Scheduler | undefined,
  waitMs: number,
  signal: AbortSignal,
) {
  return async (text: string, from: DigestCommandContext): Promise<string | undefined> => {
    await within(up, waitMs, signal);
    const running = scheduler();
    return running ? running.command(text, from) : SCHEDULER_STARTING;
  };
}

/**
 * Services (MCP servers, the digest engine) start once every channel is up, or after `waitMs`,
 * whichever comes first: loading and starting them is CPU the first poll would otherwise wait for
 * (pg-boss's start alone is about 60 ms). A turn that could use an MCP server waits for it, and a
 * digest waits for its channel, so nothing that needs them runs before they are up. False when
 * steward stops first (a refused token): then they do not start at all.
 */
export async function afterChannelsUp(
  up: Array<Promise<void>>,
  waitMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  await within(Promise.all(up), waitMs, signal);
  // The channels' first polls go out in the turns of the event loop right after they are up.
  await new Promise<void>((resolve) => setImmediate(resolve));
  return !signal.aborted;
}
