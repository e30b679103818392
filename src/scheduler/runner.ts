// One fire of one digest: take the lease, run the unattended turn, post the reply to the target
// room, leave the audit row, and tell the owner about failures and skipped fires. Engines only say
// "look at schedule X now"; everything that makes a fire happen once lives here.
import { randomUUID } from 'node:crypto';
import type { OutboundEvent, ReplySink } from '../channel/port.ts';
import type { Assistant } from '../core/assistant.ts';
import type { Logger } from '../log.ts';
import type { Db } from '../store/db.ts';
import { within } from '../within.ts';
import { formatFire, nextFire } from './cron.ts';
import { decideFire, type MissedFires } from './decide.ts';
import { digestStore, type Schedule } from './store.ts';
import { claimNotice } from './watchdog.ts';

export interface RunnerDeps {
  db: Db;
  assistant: Pick<Assistant, 'runUnattended'>;
  /** The target room's outbox; undefined when this steward cannot post there. */
  outboxFor(channel: string, room: string): ReplySink | undefined;
  /** The owner's private room on a channel, for failures and skipped fires. */
  ownerSink(channel: string): ReplySink | undefined;
  /** Resolves once the channel is up (Lifecycle.whenOnline); absent, it is taken as up already. */
  online?(channel: string): Promise<void>;
  /** How long a run waits for `online` before it fails. */
  channelWaitMs: number;
  log: Logger;
  now(): Date;
  catchUpMs: number;
}

export interface DigestRunner {
  /**
   * Looks at one schedule as of `dueBy` (the trigger's time; default now) and starts what it owes.
   * Resolves once the fire is claimed and the run started, not when the run ends.
   */
  advance(id: string, dueBy?: Date): Promise<void>;
  /** Advances every due schedule on these channels. */
  sweep(channels: readonly string[]): Promise<void>;
  /** `/digest run`: starts a run now without touching the schedule's timing. */
  runNow(schedule: Schedule): Promise<void>;
  /** Resolves when every run started so far has finished. */
  idle(): Promise<void>;
  /** Stops waiting for channels that are not up (those runs fail at once), then waits for the rest. */
  stop(): Promise<void>;
}

export function digestRunner(deps: RunnerDeps): DigestRunner {
  const store = digestStore(deps.db);
  const { log } = deps;
  const running = new Set<Promise<void>>();
  const stopping = new AbortController();
  const channelUp = (channel: string) =>
    deps.online ? within(deps.online(channel), deps.channelWaitMs, stopping.signal) : Promise.resolve(true);
  const track = (work: Promise<void>) => {
    const done = work.catch((error: Error) => log.error({ err: error }, 'digest run crashed'));
    running.add(done);
    void done.finally(() => running.delete(done));
  };

  const advance = async (id: string, dueBy?: Date) => {
    const now = deps.now();
    // Judged as of the trigger's own time (pg-boss's job, the sweep's reading), so a fire is matched
    // to its trigger even when the run starts a little later; a trigger left waiting past the
    // catch-up window is judged as of now.
    const at = dueBy && now.getTime() - dueBy.getTime() <= deps.catchUpMs ? dueBy : now;
    const schedule = await store.get(id);
    if (!schedule || schedule.paused || !schedule.nextFireAt) return;
    const decision = decideFire(
      { cron: schedule.cron, timezone: schedule.timezone, nextFireAt: schedule.nextFireAt },
      at,
      deps.catchUpMs,
    );
    if (!decision.due) return;
    const skipped = decision.missed && {
      fireAt: decision.missed.last,
      detail: missedText(schedule, decision.missed, deps.catchUpMs),
    };
    const claim = await store.claim({
      id,
      expected: schedule.nextFireAt,
      next: decision.next,
      at: now,
      ...(decision.fireAt ? { fireAt: decision.fireAt } : {}),
      ...(skipped ? { skipped } : {}),
    });
    if (!claim) return; // another steward (or an earlier trigger) took this fire
    if (skipped) {
      log.info(
        { digest: id, missed: decision.missed?.count },
        'skipped digest fires older than the catch-up window',
      );
      // Not awaited: at start the owner's room may be a channel login away.
      track(
        tellOwner(
          schedule,
          'info',
          `${skipped.detail} Next run: ${formatFire(decision.next, schedule.timezone)}.`,
        ),
      );
    }
    if (claim.runId !== undefined && decision.fireAt) {
      track(run(schedule, claim.runId, decision.fireAt, decision.next));
    }
  };

  const tellOwner = async (schedule: Schedule, level: 'info' | 'error', text: string) => {
    await channelUp(schedule.channel);
    const sink = deps.ownerSink(schedule.channel);
    if (!sink) {
      log.warn({ digest: schedule.id, channel: schedule.channel }, `no owner room to tell: ${text}`);
      return;
    }
    await Promise.resolve(sink({ type: 'notice', level, text })).catch((error: Error) =>
      log.error({ err: error, digest: schedule.id }, 'could not tell the owner about a digest'),
    );
  };

  const run = async (schedule: Schedule, runId: number, fireAt: Date, next: Date | undefined) => {
    const { channel, room, prompt } = schedule;
    const up = await channelUp(channel);
    const target = up ? deps.outboxFor(channel, room) : undefined;
    let posted = 0;
    const messageIds: string[] = [];
    const errors: string[] = [];
    let failure: string | undefined;
    let sessionId: string | null = null;
    if (!up) {
      failure = stopping.signal.aborted
        ? `steward stopped before the ${channel} channel was up`
        : `the ${channel} channel was not up ${Math.round(deps.channelWaitMs / 1000)} s after the fire`;
    } else if (!target) {
      failure = `steward cannot post in ${channel}:${room}`;
    } else {
      // Only the final reply reaches the room: tool activity and error notices are for the owner.
      // The turn's start goes too (it shows nothing): a channel keys the post by turn and step, so
      // the same post sent again by the turn resumed after a crash is the message already there.
      const sink: ReplySink = async (event: OutboundEvent) => {
        if (event.type === 'turn_started') return target(event);
        if (event.type === 'reply') {
          const delivery = await target(event);
          // A channel that says its post did not reach the room has not delivered it.
          if (delivery && !delivery.delivered) {
            errors.unshift(`the channel did not deliver the post to ${channel}:${room}`);
            return delivery;
          }
          posted++;
          messageIds.push(...(delivery?.messageIds ?? []));
          // The core records it in the delivery ledger.
          return delivery;
        } else if (event.type === 'notice' && event.level === 'error') {
          errors.push(event.text);
        }
      };
      // The run names its turn first: a turn a restart cuts off is resumed by recovery, which
      // knows nothing of runs, and settleResumed finds the run through it.
      const turnId = randomUUID();
      await store.linkTurn(runId, turnId);
      try {
        const status = await deps.assistant.runUnattended({ channel, room, text: prompt, turnId }, sink);
        // A stop cut the turn off: it stays open, the next start resumes it, and the run is
        // settled by how that turn ends (settleResumed); nothing to record or report now.
        if (status === 'interrupted') return;
        if (status !== 'answered' || posted === 0) {
          failure = errors[0]?.split(';')[0] ?? `the turn ended without a reply (${status})`;
        }
      } catch (error) {
        failure = (error as Error).message.split('\n')[0] ?? 'unknown error';
      }
      sessionId = await store.sessionOfTurn(turnId).catch(() => null);
    }
    await store.finishRun(runId, {
      outcome: failure ? 'failed' : 'posted',
      sessionId,
      posted,
      messageIds,
      detail: failure ?? null,
      at: deps.now(),
    });
    // Whoever marks the run reported tells the owner: this runner now, or the watchdog later (also
    // when steward is stopping, or the owner's room is not there to be told).
    const reachable = !stopping.signal.aborted && deps.ownerSink(schedule.channel) !== undefined;
    if (failure && reachable && (await claimNotice(deps.db, runId, deps.now()))) {
      log.warn({ digest: schedule.id, failure }, 'digest run failed');
      const when = `${formatFire(fireAt, schedule.timezone)} (${schedule.timezone})`;
      const upcoming = next ? ` Next run: ${formatFire(next, schedule.timezone)}.` : '';
      await tellOwner(schedule, 'error', `Digest ${schedule.id} (${when}) failed: ${failure}.${upcoming}`);
    }
  };

  return {
    advance,
    async sweep(channels) {
      const at = deps.now();
      for (const id of await store.due(at, channels)) {
        await advance(id, at).catch((error: Error) =>
          log.error({ err: error, digest: id }, 'digest fire failed'),
        );
      }
    },
    async runNow(schedule) {
      const at = deps.now();
      const runId = await store.startManualRun(schedule.id, at);
      const next = schedule.paused ? undefined : nextFire(schedule.cron, schedule.timezone, at);
      track(run(schedule, runId, at, next));
    },
    async idle() {
      while (running.size > 0) await Promise.all(running);
    },
    async stop() {
      stopping.abort();
      while (running.size > 0) await Promise.all(running);
    },
  };
}

function missedText(schedule: Schedule, missed: MissedFires, windowMs: number): string {
  const zone = schedule.timezone;
  const window =
    windowMs % 3_600_000 === 0 ? `${windowMs / 3_600_000} h` : `${Math.round(windowMs / 60_000)} min`;
  const runs =
    missed.count === 1 && !missed.more
      ? `its run at ${formatFire(missed.last, zone)} (${zone})`
      : `${missed.more ? 'more than ' : ''}${missed.count} runs, from ${formatFire(missed.first, zone)} to ${formatFire(missed.last, zone)} (${zone})`;
  return `Digest ${schedule.id} missed ${runs} while steward was not running; skipped, as it is more than ${window} late.`;
}
