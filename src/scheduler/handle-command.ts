// `/digest …` from any channel: the owner's words in, one reply out. The assistant calls this after
// its owner check; the reply is the text to send back to the room the command came from.
import type { Db } from '../store/db.ts';
import {
  DIGEST_EXAMPLE,
  DIGEST_HELP,
  DIGEST_ID,
  describeTarget,
  parseDigestCommand,
  proposeId,
  resolveTarget,
  skillPrompt,
} from './command.ts';
import { checkCron, checkZone, formatFire, nextFire } from './cron.ts';
import { digestStore, type ListedSchedule, type Schedule } from './store.ts';

export interface DigestCommandContext {
  channel: string;
  room: string;
}

/** What the running scheduler does when the table changes, or when a run is asked for. */
export interface SchedulerControl {
  changed(id: string): Promise<void>;
  /** Starts a run and returns at once (the command's own room may be the target). */
  runNow(schedule: Schedule): Promise<void>;
}

export interface DigestCommandDeps {
  db: Db;
  /** Installed skill names; a one-word body naming one becomes a skill digest. */
  skills: ReadonlySet<string>;
  /** Channels this steward runs; `channel:room` may name any of them. */
  channels: readonly string[];
  /** Whether this steward can post in a room (a channel's outbox is defined for it). */
  canPost?(channel: string, room: string): boolean;
  now(): Date;
  /** Absent when no scheduler runs: changes are stored and take effect at the next start. */
  control?: SchedulerControl;
}

/** The reply to a /digest command, or undefined when `text` is not one. */
export async function handleDigestCommand(
  text: string,
  from: DigestCommandContext,
  deps: DigestCommandDeps,
): Promise<string | undefined> {
  const command = parseDigestCommand(text);
  if (!command) return undefined;
  const store = digestStore(deps.db);
  const now = deps.now();
  const find = async (id: string) => (DIGEST_ID.test(id) ? await store.get(id) : undefined);
  const unknown = (id: string) => `No digest is named "${id}"; /digest list shows them.`;

  switch (command.kind) {
    case 'error':
      return command.message;
    case 'help':
      return DIGEST_HELP;
    case 'list': {
      const all = await store.list();
      if (all.length === 0) return `No digests yet. Add one, e.g. ${DIGEST_EXAMPLE}`;
      return [`Digests (${all.length}):`, ...all.map((s) => listLine(s, from))].join('\n');
    }
    case 'add': {
      const cron = checkCron(command.cron);
      if (!cron.ok) return `Not added: ${cron.problem}.`;
      const zone = checkZone(command.timezone);
      if (!zone.ok) return `Not added: ${zone.problem}.`;
      const target = resolveTarget(command.target, from, deps.channels);
      if (!deps.channels.includes(target.channel)) {
        return `Not added: steward does not run the ${target.channel} channel; use here, a room id, or one of ${deps.channels.map((c) => `${c}:<room>`).join(', ')}.`;
      }
      if (deps.canPost && !deps.canPost(target.channel, target.room)) {
        return `Not added: steward cannot post in ${describeTarget(target)}; use here, or a room steward is in.`;
      }
      const skill = /^\S+$/.test(command.body) && deps.skills.has(command.body) ? command.body : null;
      const prompt = skill ? skillPrompt(skill) : command.body;
      const next = nextFire(cron.value, zone.value, now);
      let id = '';
      for (let attempt = 0; attempt < 3; attempt++) {
        id = proposeId(skill ?? command.body, await store.ids());
        const added = await store.insert({
          id,
          cron: cron.value,
          timezone: zone.value,
          channel: target.channel,
          room: target.room,
          prompt,
          skill,
          source: 'chat',
          nextFireAt: next,
        });
        if (added) break;
        id = '';
      }
      if (!id) return 'Not added: could not find a free id; try again.';
      await deps.control?.changed(id);
      const what = skill ? `skill ${skill}` : `"${clip(prompt, 60)}"`;
      return `Added digest ${id}: "${cron.value}" ${zone.value} → ${describeTarget(target, from)}, ${what}. Next run: ${formatFire(next, zone.value)}. Pause it with /digest pause ${id}.`;
    }
    case 'pause': {
      const schedule = await find(command.id);
      if (!schedule) return unknown(command.id);
      if (!(await store.pause(schedule.id))) return `Digest ${schedule.id} is already paused.`;
      await deps.control?.changed(schedule.id);
      return `Paused digest ${schedule.id}. Resume it with /digest resume ${schedule.id}.`;
    }
    case 'resume': {
      const schedule = await find(command.id);
      if (!schedule) return unknown(command.id);
      const next = nextFire(schedule.cron, schedule.timezone, now);
      if (!(await store.resume(schedule.id, next))) return `Digest ${schedule.id} is not paused.`;
      await deps.control?.changed(schedule.id);
      return `Resumed digest ${schedule.id}. Next run: ${formatFire(next, schedule.timezone)} (${schedule.timezone}).`;
    }
    case 'remove': {
      const schedule = await find(command.id);
      if (!schedule) return unknown(command.id);
      if (schedule.source === 'config') {
        return `Digest ${schedule.id} comes from the config file; remove it there (here you can /digest pause ${schedule.id}).`;
      }
      await store.remove(schedule.id);
      await deps.control?.changed(schedule.id);
      return `Removed digest ${schedule.id}. Its past runs stay in the audit trail.`;
    }
    case 'run': {
      const schedule = await find(command.id);
      if (!schedule) return unknown(command.id);
      if (!deps.control) return 'The scheduler is not running in this steward, so nothing can run now.';
      await deps.control.runNow(schedule);
      return `Running digest ${schedule.id} now; it posts to ${describeTarget({ channel: schedule.channel, room: schedule.room }, from)}.`;
    }
  }
}

function listLine(s: ListedSchedule, from: DigestCommandContext) {
  const what = s.skill ? `skill ${s.skill}` : `"${clip(s.prompt, 40)}"`;
  const state = s.paused
    ? 'paused'
    : s.nextFireAt
      ? `next ${formatFire(s.nextFireAt, s.timezone)}`
      : 'next run not set yet';
  const last = s.lastRun ? `, last ${s.lastRun.outcome} ${formatFire(s.lastRun.fireAt, s.timezone)}` : '';
  const source = s.source === 'config' ? ' [config]' : '';
  return `${s.id}: "${s.cron}" ${s.timezone} → ${describeTarget(s, from)}, ${what}; ${state}${last}${source}`;
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
