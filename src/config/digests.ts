// `digests:` in the config file: scheduled posts an operator keeps in git. Synced into the
// schedules table at start (source 'config'); chat can pause them but not remove them.
import { ConfigError } from '../errors.ts';
import { DIGEST_ID } from '../scheduler/command.ts';
import { checkCron, checkZone } from '../scheduler/cron.ts';
import { DEFAULT_CATCH_UP_MS } from '../scheduler/decide.ts';

export interface DigestConfig {
  id: string;
  cron: string;
  /** Canonical IANA name. */
  timezone: string;
  channel: string;
  room: string;
  prompt?: string;
  /** An installed skill; checked against the skills when the scheduler starts. */
  skill?: string;
  /** Where the entry is in the file, for errors found later ("file line 12, key digests.markets"). */
  where: string;
}

export interface DigestsConfig {
  schedules: DigestConfig[];
  /** A fire missed by at most this long runs late, once; older ones are skipped with a notice. */
  catchUpMs: number;
}

interface DigestsSection {
  digests?: Record<string, unknown>;
  digest_catch_up_minutes?: number;
}

const FIELDS = ['cron', 'timezone', 'channel', 'room', 'prompt', 'skill'] as const;
const CHANNEL = /^[a-z][a-z0-9_-]*$/;
const SKILL = /^[a-z0-9][a-z0-9-]*$/;

/** Undefined when the file has neither key. */
export function resolveDigests(
  tree: DigestsSection,
  where: (key: string) => string,
): DigestsConfig | undefined {
  if (tree.digests === undefined && tree.digest_catch_up_minutes === undefined) return undefined;
  const schedules = Object.entries(tree.digests ?? {}).map(([id, entry]) => resolveEntry(id, entry, where));
  return {
    schedules,
    catchUpMs:
      tree.digest_catch_up_minutes === undefined
        ? DEFAULT_CATCH_UP_MS
        : tree.digest_catch_up_minutes * 60_000,
  };
}

function resolveEntry(id: string, entry: unknown, where: (key: string) => string): DigestConfig {
  const key = `digests.${id}`;
  const fail = (at: string, problem: string) => failAt(where, at, problem);
  if (!DIGEST_ID.test(id)) {
    fail(key, 'a digest id uses lowercase letters, digits and dashes (at most 32), e.g. markets-morning');
  }
  const e = entry as Record<string, unknown>;
  for (const name of Object.keys(e)) {
    if (!(FIELDS as readonly string[]).includes(name)) {
      fail(`${key}.${name}`, `unknown key; use ${FIELDS.join(', ')}`);
    }
  }
  const text = (name: (typeof FIELDS)[number], hint: string): string | undefined => {
    const value = e[name];
    if (value === undefined) return undefined;
    // A numeric room id (Telegram's are negative numbers) is read as a number by YAML.
    if (name === 'room' && typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
    if (typeof value !== 'string' || value.trim() === '')
      fail(`${key}.${name}`, `must be a non-empty string; ${hint}`);
    return (value as string).trim();
  };
  const required = (name: (typeof FIELDS)[number], hint: string): string =>
    text(name, hint) ?? fail(key, `${name} is missing; ${hint}`);

  const cron = checkCron(required('cron', 'e.g. cron: "30 7 * * 1-5"'));
  if (!cron.ok) return failAt(where, `${key}.cron`, cron.problem);
  const zone = checkZone(required('timezone', 'e.g. timezone: Europe/Paris'));
  if (!zone.ok) return failAt(where, `${key}.timezone`, zone.problem);
  const channel = required('channel', 'name the channel that posts it, e.g. channel: telegram');
  if (!CHANNEL.test(channel)) fail(`${key}.channel`, 'name a channel, e.g. telegram or matrix');
  const room = required('room', 'give the room id on that channel, in quotes, e.g. room: "-1001234567890"');
  const prompt = text('prompt', 'say what the digest should produce');
  const skill = text('skill', 'name an installed skill, e.g. skill: markets-digest');
  if ((prompt === undefined) === (skill === undefined)) {
    fail(key, 'give either prompt (what to produce) or skill (an installed skill), not both or neither');
  }
  if (skill !== undefined && !SKILL.test(skill))
    fail(`${key}.skill`, 'name an installed skill, e.g. markets-digest');
  return {
    id,
    cron: cron.value,
    timezone: zone.value,
    channel,
    room,
    ...(prompt !== undefined ? { prompt } : {}),
    ...(skill !== undefined ? { skill } : {}),
    where: where(key),
  };
}

function failAt(where: (key: string) => string, at: string, problem: string): never {
  throw new ConfigError(`config: ${where(at)}: ${problem}`);
}
