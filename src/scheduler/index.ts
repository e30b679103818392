// Scheduled digests: startScheduler is what the CLI calls; handleDigestCommand is what the
// assistant calls for `/digest`.
import type { Clock, ConstructorOptions } from 'pg-boss';
import type { ReplySink } from '../channel/port.ts';
import type { DigestConfig } from '../config/digests.ts';
import type { Assistant } from '../core/assistant.ts';
import { ConfigError } from '../errors.ts';
import { DEFAULT_LIMITS } from '../limits.ts';
import type { Logger } from '../log.ts';
import type { Db } from '../store/db.ts';
import { skillPrompt } from './command.ts';
import { nextFire } from './cron.ts';
import { DEFAULT_CATCH_UP_MS } from './decide.ts';
import type { Engine } from './engine.ts';
import { DEFAULT_LEASE_TICK_MS, leaseEngine } from './engine-lease.ts';
import { type DigestCommandContext, handleDigestCommand } from './handle-command.ts';
import { digestRunner } from './runner.ts';
import { digestStatus } from './status.ts';
import { digestStore } from './store.ts';
import { digestWatchdog } from './watchdog.ts';

/** pg-boss's own system clock, written out so that PGlite mode never loads pg-boss. */
const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
};

/** How often the watchdog looks for undelivered fires. */
const WATCHDOG_EVERY_MS = 60_000;

export { DIGEST_HELP } from './command.ts';
export { DEFAULT_CATCH_UP_MS } from './decide.ts';
export { type DigestCommandContext, type DigestCommandDeps, handleDigestCommand } from './handle-command.ts';

export interface SchedulerOptions {
  db: Db;
  assistant: Pick<Assistant, 'runUnattended'>;
  /** Channels this steward runs. It posts only their digests; others are left to another steward. */
  channels: readonly string[];
  /** A room's outbox (Channel.outbox); undefined when this steward cannot post there. */
  outboxFor(channel: string, room: string): ReplySink | undefined;
  /** The owner's private room on a channel: failures and skipped fires are reported there. */
  ownerSink(channel: string): ReplySink | undefined;
  /** Resolves once a channel is up (Lifecycle.whenOnline): a fire waits for it before posting. */
  online?(channel: string): Promise<void>;
  /** How long a fire waits for `online` (default Limits.digestChannelWaitMs). */
  channelWaitMs?: number;
  /** Installed skill names. */
  skills: ReadonlySet<string>;
  log: Logger;
  /** Digests from the config file (Config.digests): synced into the table with source 'config'. */
  config?: { schedules: readonly DigestConfig[]; catchUpMs?: number };
  /** Required for the pg-boss engine: pg-boss keeps its own small pool. */
  databaseUrl?: string;
  /** Default: pg-boss on PostgreSQL, the row-lease engine on embedded PGlite. */
  engine?: 'pg-boss' | 'lease';
  /** Time and timers for both engines (pg-boss's Clock); tests pass a pg-boss TestClock. */
  clock?: Clock;
  /** Lease engine: how often it looks for due schedules. */
  leaseTickMs?: number;
  /** pg-boss tuning, e.g. polling intervals. */
  bossOptions?: Partial<ConstructorOptions>;
  /** A fire with no delivered post this long after it was due is reported. */
  graceMs?: number;
}

export interface Scheduler {
  readonly engine: 'pg-boss' | 'lease';
  /** The reply to a /digest command (undefined when the text is not one); route the assistant here. */
  command(text: string, from: DigestCommandContext): Promise<string | undefined>;
  /** Resolves when every fire handled so far has finished running. */
  idle(): Promise<void>;
  /** Stops firing and waits for runs in progress. Leaves the database open. */
  stop(): Promise<void>;
  /** Reports fires past their grace without a delivered post (it also runs every minute). */
  watchdog(): Promise<number>;
  /** One line per digest for /status: its next fire and its last run. */
  status(): Promise<string[]>;
}

/** Syncs config digests, starts the engine, and catches up on fires missed while stopped. */
export async function startScheduler(options: SchedulerOptions): Promise<Scheduler> {
  const { db, log, channels } = options;
  const clock = options.clock ?? systemClock;
  const now = () => new Date(clock.now());
  const store = digestStore(db);
  const catchUpMs = options.config?.catchUpMs ?? DEFAULT_CATCH_UP_MS;
  await syncConfig(options, now());
  for (const s of await store.withoutNextFire())
    await store.setNextFire(s.id, nextFire(s.cron, s.timezone, now()));
  // A run still marked running this long after it started belongs to a steward that stopped.
  await store.markInterrupted(new Date(now().getTime() - 60 * 60 * 1000), now());

  const runner = digestRunner({
    db,
    assistant: options.assistant,
    outboxFor: options.outboxFor,
    ownerSink: options.ownerSink,
    ...(options.online ? { online: options.online } : {}),
    channelWaitMs: options.channelWaitMs ?? DEFAULT_LIMITS.digestChannelWaitMs,
    log,
    now,
    catchUpMs,
  });
  const kind = options.engine ?? (db.kind === 'postgres' ? 'pg-boss' : 'lease');
  let engine: Engine;
  if (kind === 'pg-boss') {
    if (!options.databaseUrl) throw new Error('the pg-boss digest engine needs the PostgreSQL URL');
    const { pgBossEngine } = await import('./engine-pg-boss.ts');
    engine = pgBossEngine({
      connectionString: options.databaseUrl,
      runner,
      store,
      channels,
      clock,
      log,
      ...(options.bossOptions ? { options: options.bossOptions } : {}),
    });
  } else {
    engine = leaseEngine({
      runner,
      channels,
      clock,
      tickMs: options.leaseTickMs ?? DEFAULT_LEASE_TICK_MS,
      log,
    });
  }
  await engine.start();
  log.info({ engine: engine.name, channels }, 'digest scheduler started');
  const watchdog = digestWatchdog({
    db,
    log,
    now,
    graceMs: options.graceMs ?? DEFAULT_LIMITS.digestGraceMs,
    ownerSink: options.ownerSink,
  });
  const watch = () =>
    watchdog.check().catch((error: Error) => {
      log.warn(`digest watchdog: ${error.message}`);
      return 0;
    });
  const watching = clock.setInterval(() => void watch(), WATCHDOG_EVERY_MS);
  // Fires missed while no steward ran: within the window they run now, once; older ones are skipped.
  await runner.sweep(channels);

  const control = {
    changed: (id: string) => engine.changed(id),
    runNow: runner.runNow,
  };
  const outboxes = options.outboxFor;
  return {
    engine: engine.name,
    command: (text, from) =>
      handleDigestCommand(text, from, {
        db,
        skills: options.skills,
        channels,
        canPost: (channel, room) => outboxes(channel, room) !== undefined,
        now,
        control,
      }),
    async idle() {
      await engine.idle();
      await runner.idle();
    },
    async stop() {
      clock.clearInterval(watching);
      await engine.stop();
      await runner.stop();
    },
    watchdog: watch,
    async status() {
      await store.settleResumed(now());
      return digestStatus(db);
    },
  };
}

/** Config digests into the table: created, updated in place, or removed when gone from the file. */
async function syncConfig(options: SchedulerOptions, now: Date): Promise<void> {
  const store = digestStore(options.db);
  const entries = options.config?.schedules ?? [];
  const existing = new Map((await store.list()).map((s) => [s.id, s]));
  for (const d of entries) {
    if (d.skill && !options.skills.has(d.skill)) {
      throw new ConfigError(
        `config: ${d.where}: no installed skill is named "${d.skill}"; use one of ${[...options.skills].sort().join(', ') || '(none installed)'}, or give a prompt instead`,
      );
    }
    if (existing.get(d.id)?.source === 'chat') {
      options.log.warn(
        { digest: d.id },
        'a digest added in chat had the id of a config digest; the config file wins',
      );
    }
    if (!options.channels.includes(d.channel)) {
      options.log.warn(
        { digest: d.id, channel: d.channel },
        'digest targets a channel this steward does not run; another steward must post it',
      );
    }
    await store.upsertFromConfig({
      id: d.id,
      cron: d.cron,
      timezone: d.timezone,
      channel: d.channel,
      room: d.room,
      prompt: d.skill ? skillPrompt(d.skill) : (d.prompt ?? ''),
      skill: d.skill ?? null,
      source: 'config',
      nextFireAt: nextFire(d.cron, d.timezone, now),
    });
  }
  const removed = await store.removeConfigExcept(entries.map((d) => d.id));
  if (removed.length > 0) options.log.info({ removed }, 'removed digests no longer in the config file');
}
