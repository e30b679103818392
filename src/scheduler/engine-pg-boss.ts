// The engine on PostgreSQL: pg-boss evaluates each digest's cron in its time zone, files one job
// per fire under a singleton key (so stewards sharing the database create it once), and hands it to
// one worker. The worker asks the runner to advance the schedule; the runner's lease makes a second
// delivery (a catch-up job, a retry) change nothing.
import { type Clock, type ConstructorOptions, type JobWithMetadata, PgBoss } from 'pg-boss';
import type { Logger } from '../log.ts';
import { type Engine, inFlight } from './engine.ts';
import type { DigestRunner } from './runner.ts';
import { SerialClient } from './serial-client.ts';
import type { DigestStore, Schedule } from './store.ts';

/** One queue per channel, so a steward works only the digests it can post. */
export const QUEUE_PREFIX = 'steward-digest.';
const queueOf = (channel: string) => `${QUEUE_PREFIX}${channel}`;

export interface PgBossEngineDeps {
  connectionString: string;
  runner: DigestRunner;
  store: DigestStore;
  channels: readonly string[];
  clock: Clock;
  log: Logger;
  /** pg-boss tuning (polling intervals and the like); tests shorten them. */
  options?: Partial<ConstructorOptions>;
}

export function pgBossEngine(deps: PgBossEngineDeps): Engine {
  const { log, store } = deps;
  const work = inFlight();
  // `Client` reaches pg-boss's pg.Pool as it is (its config is spread into the pool's), though its
  // types do not list it.
  const pool = { Client: SerialClient } as Partial<ConstructorOptions>;
  const boss = new PgBoss({
    ...pool,
    connectionString: deps.connectionString,
    schema: 'pgboss',
    max: 3,
    application_name: 'steward-scheduler',
    clock: deps.clock,
    ...deps.options,
  });
  boss.on('error', (error) => log.error({ err: error }, 'pg-boss reported an error'));
  boss.on('warning', (warning) => log.warn({ warning: warning.data }, `pg-boss: ${warning.message}`));
  const queues = new Set<string>();

  const ensureQueue = async (channel: string) => {
    const name = queueOf(channel);
    if (queues.has(name)) return name;
    // No retries: a fire that failed is reported to the owner, and the next fire runs normally.
    await boss.createQueue(name, { retryLimit: 0, expireInSeconds: 15 * 60 });
    queues.add(name);
    return name;
  };

  const ours = async (key?: string) =>
    (await boss.getSchedules()).filter(
      (s) => s.name.startsWith(QUEUE_PREFIX) && (key === undefined || s.key === key),
    );

  /** Makes pg-boss's schedule for `id` match the table: present unless paused or removed. */
  const reconcile = async (id: string, schedule: Schedule | undefined) => {
    const wanted = schedule && !schedule.paused ? await ensureQueue(schedule.channel) : undefined;
    for (const stale of await ours(id)) {
      if (stale.name !== wanted) await boss.unschedule(stale.name, stale.key);
    }
    if (schedule && wanted) {
      await boss.schedule(wanted, schedule.cron, { id }, { tz: schedule.timezone, key: id, missed: 'once' });
    }
  };

  return {
    name: 'pg-boss',
    async start() {
      try {
        await boss.start();
      } catch (error) {
        await boss.stop({ graceful: false }).catch(() => {});
        throw error;
      }
      const all = await store.list();
      const known = new Set(all.map((s) => s.id));
      for (const s of all) await reconcile(s.id, s);
      for (const stale of await ours()) {
        if (!known.has(stale.key)) await boss.unschedule(stale.name, stale.key);
      }
      for (const channel of deps.channels) {
        await boss.work(
          await ensureQueue(channel),
          { includeMetadata: true, batchSize: 10 },
          async (jobs: JobWithMetadata<{ id: string }>[]) => {
            for (const job of jobs) {
              // The job's creation time is the database's clock: a fire pg-boss found due is due.
              // A failure leaves the fire unclaimed; the next trigger (or start) takes it up.
              await work.add(
                deps.runner
                  .advance(job.data.id, job.createdOn)
                  .catch((error: Error) =>
                    log.error({ err: error, digest: job.data.id }, 'digest fire failed'),
                  ),
              );
            }
          },
        );
      }
    },
    async changed(id) {
      await reconcile(id, await store.get(id));
    },
    idle: () => work.idle(),
    async stop() {
      await boss.stop({ graceful: true, timeout: 10_000 });
      await work.idle();
    },
  };
}
