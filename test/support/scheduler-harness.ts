// A digest scheduler on a real database, a real assistant and the scripted model, driven by a
// pg-boss TestClock. Any outbox can receive the posts: the recording one below, or a real channel's
// (Channel.outbox) for an end-to-end test.

import { TestClock } from 'pg-boss';
import type { OutboundEvent, ReplySink } from '../../src/channel/port.ts';
import { type Assistant, createAssistant } from '../../src/core/assistant.ts';
import { openAiCompatible } from '../../src/gateway/openai-compatible.ts';
import { createLogger } from '../../src/log.ts';
import { type Scheduler, type SchedulerOptions, startScheduler } from '../../src/scheduler/index.ts';
import type { Db } from '../../src/store/db.ts';
import { sessionGrants } from '../../src/store/grants.ts';
import { builtinPureTools } from '../../src/tools/builtin/index.ts';
import { createToolRegistry } from '../../src/tools/registry.ts';
import { conservativeGate } from './gates.ts';
import { tempDir } from './services.ts';

export const OWNER = 'owner-1';

/** Outboxes that record what each room and each channel's owner room received. */
export function recordingOutboxes(reachable: (channel: string, room: string) => boolean = () => true) {
  const rooms = new Map<string, OutboundEvent[]>();
  const owner = new Map<string, OutboundEvent[]>();
  const list = (map: Map<string, OutboundEvent[]>, key: string) => {
    const events = map.get(key) ?? [];
    map.set(key, events);
    return events;
  };
  return {
    outboxFor(channel: string, room: string): ReplySink | undefined {
      if (!reachable(channel, room)) return undefined;
      return (event) => {
        list(rooms, `${channel}:${room}`).push(event);
      };
    },
    ownerSink(channel: string): ReplySink | undefined {
      return (event) => {
        list(owner, channel).push(event);
      };
    },
    /** Reply texts posted in a room. */
    posts(channel: string, room: string): string[] {
      return (rooms.get(`${channel}:${room}`) ?? []).flatMap((e) => (e.type === 'reply' ? [e.text] : []));
    },
    events(channel: string, room: string): OutboundEvent[] {
      return rooms.get(`${channel}:${room}`) ?? [];
    },
    /** What a room would show: every event but a turn's start and end, which render nothing. */
    shown(channel: string, room: string): OutboundEvent[] {
      return (rooms.get(`${channel}:${room}`) ?? []).filter(
        (e) => e.type !== 'turn_started' && e.type !== 'turn_ended',
      );
    },
    /** Notice texts the owner got on a channel. */
    ownerNotices(channel: string): string[] {
      return (owner.get(channel) ?? []).flatMap((e) => (e.type === 'notice' ? [e.text] : []));
    },
  };
}

export interface DigestHarnessOptions
  extends Partial<Omit<SchedulerOptions, 'db' | 'assistant' | 'clock' | 'log' | 'outboxFor' | 'ownerSink'>> {
  db: Db;
  /** The scripted model's base URL (…/v1). */
  modelUrl: string;
  clock: TestClock;
  outboxFor: SchedulerOptions['outboxFor'];
  ownerSink: SchedulerOptions['ownerSink'];
}

export interface DigestHarness {
  assistant: Assistant;
  scheduler: Scheduler;
  /** Moves the clock on (timers fire at their own times) and waits for the runs it started. */
  advance(ms: number): Promise<void>;
  /** A /digest command from the owner's room `room` on `channel`. */
  command(text: string, channel?: string, room?: string): Promise<string | undefined>;
  stop(): Promise<void>;
}

/** Starts a scheduler (pg-boss on PostgreSQL when `databaseUrl` is given, else the lease engine). */
export async function startDigestHarness(options: DigestHarnessOptions): Promise<DigestHarness> {
  const { db, clock, modelUrl, ...rest } = options;
  const workspace = tempDir();
  const channels = options.channels ?? ['test'];
  const assistant = createAssistant({
    db,
    gate: conservativeGate(sessionGrants(db, () => new Date())),
    log: createLogger('silent', []),
    owners: Object.fromEntries(channels.map((c) => [c, OWNER])),
    workspace: workspace.path,
    route: {
      name: 'default',
      entries: [{ providerName: 'default', provider: openAiCompatible({ baseUrl: modelUrl }), model: 'm' }],
    },
    tools: createToolRegistry(builtinPureTools),
    retry: { retries: 0 },
    now: () => new Date(clock.now()),
  });
  const scheduler = await startScheduler({
    skills: new Set(['markets-digest']),
    log: createLogger('silent', []),
    leaseTickMs: 30_000,
    ...rest,
    channels,
    db,
    assistant,
    clock,
    // Short polling keeps a controlled-clock test to a few statements per simulated minute.
    bossOptions: { cronWorkerIntervalSeconds: 5, cronMonitorIntervalSeconds: 30, ...options.bossOptions },
  });
  return {
    assistant,
    scheduler,
    async advance(ms) {
      await clock.tick(ms);
      await scheduler.idle();
    },
    command: (text, channel = channels[0] ?? 'test', room = 'owner-room') =>
      scheduler.command(text, { channel, room }),
    async stop() {
      await scheduler.stop();
      workspace.remove();
    },
  };
}

export interface RunRow {
  schedule_id: string;
  fire_at: Date;
  trigger: string;
  outcome: string;
  session_id: string | null;
  posted: number;
  detail: string | null;
}

export async function digestRuns(db: Db, scheduleId?: string): Promise<RunRow[]> {
  const result = await db.query<RunRow>(
    `select schedule_id, fire_at, trigger, outcome, session_id, posted, detail from digest_runs
     where $1::text is null or schedule_id = $1 order by id`,
    [scheduleId ?? null],
  );
  return result.rows;
}

/** Polls (real time, briefly) until `check` holds: runs finish on their own after the clock moved. */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export { TestClock };
