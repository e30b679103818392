// The engine on the embedded database: a timer sweeps the schedules table and the runner's row
// lease takes each due fire. PGlite belongs to one process, so there is no second steward to race.
import type { Clock } from 'pg-boss';
import type { Logger } from '../log.ts';
import { type Engine, inFlight } from './engine.ts';
import type { DigestRunner } from './runner.ts';

/** How often the lease engine looks for due schedules: a fire runs at most this late. */
export const DEFAULT_LEASE_TICK_MS = 30_000;

export function leaseEngine(deps: {
  runner: DigestRunner;
  channels: readonly string[];
  clock: Clock;
  tickMs: number;
  log: Logger;
}): Engine {
  const work = inFlight();
  let timer: unknown;
  let sweeping = false;
  let again = false;
  const tick = () => {
    // Sweeps never overlap; a tick that comes while one runs makes it sweep once more when done.
    if (sweeping) {
      again = true;
      return;
    }
    sweeping = true;
    void work.add(
      deps.runner
        .sweep(deps.channels)
        .catch((error: Error) => deps.log.error({ err: error }, 'digest sweep failed'))
        .finally(() => {
          sweeping = false;
          if (again && timer !== undefined) {
            again = false;
            tick();
          }
        }),
    );
  };
  return {
    name: 'lease',
    async start() {
      timer = deps.clock.setInterval(tick, deps.tickMs);
      (timer as { unref?: () => void }).unref?.();
    },
    changed: async () => {},
    idle: () => work.idle(),
    async stop() {
      if (timer !== undefined) deps.clock.clearInterval(timer);
      timer = undefined;
      await work.idle();
    },
  };
}
