// What the owner types or reacts, turned into what the core understands. Pure functions.
import { PERMISSION_DECISIONS, type PermissionDecision } from '../../src/channel/port.ts';

/** Seeded on every prompt, in this order. */
export const DECISION_REACTIONS: ReadonlyArray<readonly [string, PermissionDecision]> = [
  ['✅', 'once'],
  ['🔁', 'session'],
  ['❌', 'deny'],
];

/** The decision a reaction key stands for (emoji presentation selectors ignored). */
export function decisionFromReaction(key: string): PermissionDecision | undefined {
  const bare = key.replace(/\uFE0F/g, '').trim();
  return DECISION_REACTIONS.find(([emoji]) => emoji === bare)?.[1];
}

/** A typed answer: `once`, `session` or `deny`, also with a command prefix or a full stop. */
export function decisionFromText(text: string): PermissionDecision | undefined {
  const word = text
    .trim()
    .toLowerCase()
    .replace(/^[!/]/, '')
    .replace(/[.!]+$/, '');
  return PERMISSION_DECISIONS.find((d) => d === word);
}

/** Commands the core or this adapter answer; `!name` is accepted for each (some clients eat `/`). */
const COMMANDS = new Set([
  'new',
  'research',
  'cost',
  'grants',
  'revoke',
  'help',
  'start',
  'output',
  'status',
  'budget',
  'digest',
]);

/** `!new` → `/new`, and so on for known commands only; anything else is left as written. */
export function translateCommand(text: string): string {
  const m = /^!([a-zA-Z]+)(?=\s|$)/.exec(text.trimStart());
  if (!m?.[1] || !COMMANDS.has(m[1].toLowerCase())) return text;
  return `/${m[1].toLowerCase()}${text.trimStart().slice(m[0].length)}`;
}

/** `/output <ref>` (after translation): the ref, `''` when it is missing, undefined for other text. */
export function outputCommand(text: string): string | undefined {
  const m = /^\/output(?:\s+(\S+))?\s*$/.exec(text.trim());
  return m ? (m[1] ?? '') : undefined;
}

/** A reply's body starts with the quoted original ("> <@bot> …" lines, then a blank line). */
export function stripReplyFallback(body: string): string {
  const lines = body.split('\n');
  if (!lines[0]?.startsWith('> ')) return body;
  let i = 0;
  while (i < lines.length && (lines[i]?.startsWith('>') ?? false)) i++;
  if (lines[i] === '') i++;
  return lines.slice(i).join('\n');
}

/** The extra lines `/help` gets on Matrix. */
export const MATRIX_HELP = [
  'On Matrix every command also works with ! instead of / (!new, !cost, …).',
  '!output <ref> – send a stored large output again as a file',
  'Permission prompts: react ✅ once, 🔁 for this session, ❌ deny, or reply once, session or deny.',
].join('\n');
