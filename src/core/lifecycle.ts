// The core's lifecycle, owned here and nowhere else: `start` recovers once, runs the one sweeper
// of overdue questions and starts background services (digests) behind the channels, so polling
// never waits for them; `stop` aborts running turns
// through their signal, waits for them, and stops the services. Channels only render and translate.
import type { Core, Outbox } from './core.ts';
import { deliverLate } from './late-replies.ts';
import { expireOverdue, queueRecovery } from './recovery.ts';

export type { Outbox };

/** Something that runs beside the turns (the digest scheduler) and stops with them. */
export interface Service {
  stop(): Promise<void>;
}

export interface Lifecycle {
  /**
   * Starts the sweeper, then the services in the background: `start` resolves after the first sweep,
   * and its `services` settles once every service started (rejecting with the first that could
   * not). Each channel then reports itself online through the port (`online`), which resumes its
   * cut-off turns before the channel takes new input.
   */
  start(input: {
    outbox: Outbox;
    services?: Array<() => Promise<Service>>;
    /** Tells the owner in their private room (budget notices of unattended turns, the watchdog). */
    notifyOwner?(text: string): Promise<void>;
    /** Lines for /status: channels and their health, digests. */
    statusLines?(): Promise<string[]>;
  }): Promise<{ services: Promise<void> }>;
  /** Resolves once running turns have wound down (or the grace period passed) and services stopped. */
  stop(): Promise<void>;
  /** Resolves when no turn is queued or running (input ended: let the last turns finish). */
  idle(): Promise<void>;
  /**
   * Resolves once the channel has reported itself online and its cut-off turns are queued: a
   * digest fired before then (caught up at start) waits for it instead of finding no outbox.
   */
  whenOnline(channel: string): Promise<void>;
}

export function lifecycle(core: Core): Lifecycle & { online(channel: string): Promise<void> } {
  let sweeper: NodeJS.Timeout | undefined;
  const services: Service[] = [];
  let starting: Promise<void> = Promise.resolve();
  let stopped: Promise<void> | undefined;
  let outbox: Outbox | undefined;
  const recovered = new Set<string>();
  const up = new Map<string, PromiseWithResolvers<void>>();
  const upFor = (channel: string) => {
    const known = up.get(channel) ?? Promise.withResolvers<void>();
    up.set(channel, known);
    return known;
  };
  // One late-delivery round per channel at a time; a nudge during one is covered by the next sweep.
  const delivering = new Set<string>();
  const late = (channel: string) => {
    if (!outbox || !recovered.has(channel) || delivering.has(channel)) return;
    delivering.add(channel);
    void deliverLate(core, outbox, channel)
      .catch((error: Error) => core.log.warn(`could not post undelivered replies: ${error.message}`))
      .finally(() => delivering.delete(channel));
  };
  return {
    async online(channel) {
      // Once per channel per process: a reconnecting channel must not resume turns already running.
      if (!outbox || recovered.has(channel)) return;
      recovered.add(channel);
      await queueRecovery(core, outbox, channel).finally(() => upFor(channel).resolve());
      late(channel);
    },
    whenOnline: (channel) => upFor(channel).promise,
    async start({ outbox: posts, services: starters = [], notifyOwner, statusLines }) {
      outbox = posts;
      if (notifyOwner) core.owner.notify = notifyOwner;
      if (statusLines) core.statusLines = statusLines;
      core.late.nudge = late;
      const sweep = () => {
        for (const channel of recovered) {
          late(channel);
          // Turns a failure stranded while steward ran (the database went away mid-turn).
          void queueRecovery(core, posts, channel, 'Resuming a turn that a failure cut off.').catch(
            (error: Error) => core.log.warn(`could not look for stranded turns: ${error.message}`),
          );
        }
        return expireOverdue(core, posts).catch((error: Error) => {
          core.log.warn(`could not expire overdue questions: ${error.message}`);
          return 0;
        });
      };
      await sweep();
      sweeper = setInterval(() => void sweep(), core.loop.limits.sweepEveryMs);
      sweeper.unref();
      starting = (async () => {
        for (const startService of starters) services.push(await startService());
      })();
      return { services: starting };
    },
    idle: () => core.runner.idle(),
    stop() {
      stopped ??= (async () => {
        clearInterval(sweeper);
        const drained = await core.runner.stop(core.loop.limits.stopGraceMs);
        if (!drained) core.log.warn('some turns did not stop within the grace period');
        // A service still starting is stopped once it is up (a failed one has nothing to stop).
        await starting.catch(() => {});
        for (const service of services.splice(0).reverse()) await service.stop();
      })();
      return stopped;
    },
  };
}
