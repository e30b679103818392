// The words of `/digest`: parsed into a command, with one-line corrections. Pure; the store and the
// engine come in handle-command.ts.

export const DIGEST_EXAMPLE = '/digest add "30 7 * * 1-5" Europe/Paris here markets-digest';

export const DIGEST_HELP = [
  'Digests (posts that run on a schedule):',
  '/digest add "<cron>" <time zone> <here | room | channel:room> <skill or prompt>',
  `  e.g. ${DIGEST_EXAMPLE}`,
  '/digest list – every digest, its next run and its last outcome',
  '/digest pause <id> · /digest resume <id> · /digest remove <id>',
  '/digest run <id> – run it now',
].join('\n');

/** Lowercase letters, digits and dashes; starts with a letter or digit; at most 32 characters. */
export const DIGEST_ID = /^[a-z0-9][a-z0-9-]{0,31}$/;

export type DigestCommand =
  | { kind: 'help' }
  | { kind: 'list' }
  | { kind: 'add'; cron: string; timezone: string; target: string; body: string }
  | { kind: 'pause' | 'resume' | 'remove' | 'run'; id: string }
  | { kind: 'error'; message: string };

const BY_ID = ['pause', 'resume', 'remove', 'run'] as const;

// Phones turn " into “ ” or „; all of them open and close a cron expression.
const QUOTES = new Set(['"', '“', '”', '„', "'", '‘', '’']);

/** Undefined when `text` is not a /digest command. */
export function parseDigestCommand(text: string): DigestCommand | undefined {
  const trimmed = text.trim();
  const head = /^\/digest(?=\s|$)/.exec(trimmed);
  if (!head) return undefined;
  const rest = trimmed.slice(head[0].length).trim();
  const [sub = '', ...args] = rest.split(/\s+/).filter(Boolean);
  const verb = sub.toLowerCase();
  if (verb === '' || verb === 'help') return { kind: 'help' };
  if (verb === 'list') return { kind: 'list' };
  if (verb === 'add') return parseAdd(rest.slice(sub.length).trim());
  const byId = BY_ID.find((v) => v === verb);
  if (byId) {
    const [id, ...extra] = args;
    if (!id || extra.length > 0) {
      return { kind: 'error', message: `Usage: /digest ${byId} <id>; /digest list shows the ids.` };
    }
    return { kind: byId, id: id.toLowerCase() };
  }
  return {
    kind: 'error',
    message: `Unknown /digest command "${sub}"; use add, list, pause, resume, remove or run (/digest help).`,
  };
}

function parseAdd(text: string): DigestCommand {
  const error = (problem: string): DigestCommand => ({
    kind: 'error',
    message: `${problem}, e.g. ${DIGEST_EXAMPLE}`,
  });
  if (text === '') return error('Usage: /digest add "<cron>" <time zone> <here | room> <skill or prompt>');
  if (!QUOTES.has(text[0] as string)) return error('Put the cron expression in quotes');
  const close = [...text.slice(1)].findIndex((c) => QUOTES.has(c));
  if (close === -1) return error('The cron expression has no closing quote');
  const cron = [...text.slice(1)].slice(0, close).join('');
  const after = [...text.slice(1)].slice(close + 1).join('');
  const match = /^\s*(\S+)?\s*(\S+)?\s*([\s\S]*)$/.exec(after);
  const [, timezone, target, body = ''] = match ?? [];
  if (!timezone) return error('Add a time zone after the cron expression');
  if (!target) return error('Add where to post after the time zone: here, a room id, or channel:room');
  if (body.trim() === '') return error('Add what to post: a skill name or a prompt');
  return { kind: 'add', cron, timezone, target, body: body.trim() };
}

/**
 * `here` is the room the command came from; `channel:room` names a room on another running
 * channel; anything else is a room on the same channel (room ids may hold colons themselves).
 */
export function resolveTarget(
  target: string,
  from: { channel: string; room: string },
  channels: readonly string[],
): { channel: string; room: string } {
  if (target.toLowerCase() === 'here') return { channel: from.channel, room: from.room };
  const colon = target.indexOf(':');
  if (colon > 0 && colon < target.length - 1) {
    const channel = target.slice(0, colon);
    if (channels.includes(channel)) return { channel, room: target.slice(colon + 1) };
  }
  return { channel: from.channel, room: target };
}

/** How a target reads back to the owner, relative to the room they wrote from. */
export function describeTarget(
  target: { channel: string; room: string },
  from?: { channel: string; room: string },
): string {
  if (from && target.channel === from.channel && target.room === from.room) return 'here';
  if (from && target.channel === from.channel) return target.room;
  return `${target.channel}:${target.room}`;
}

/** The prompt a skill digest runs with. */
export function skillPrompt(skill: string): string {
  return `Load the ${skill} skill with load_skill and produce its digest.`;
}

/** A readable id from the skill name or the prompt's first words, not one of `taken`. */
export function proposeId(body: string, taken: ReadonlySet<string>): string {
  const words = body
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
  let base = '';
  for (const word of words.slice(0, 3)) {
    const next = base ? `${base}-${word}` : word;
    if (next.length > 24) break;
    base = next;
  }
  base = (base || words[0]?.slice(0, 24) || 'digest').replace(/-+$/, '');
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}
