// A shell command as segments: the scan (shell-scan.ts) rewrites what shell-quote cannot read, then
// one shell-quote reading (shell-tokens.ts for the common shapes, shell-quote itself for the rest)
// yields words and operators, split here at every && || ; | & ( ) and newline.
// Substitutions become extra segments, so what runs inside them is judged too.
import { parse } from 'shell-quote';
import {
  ANSI_MARK,
  BRACE_MARK,
  GLOB_MARK,
  HEREDOC_MARK,
  type HereDoc,
  type Scan,
  VAR_CLOSE,
  VAR_OPEN,
} from './shell-marks.ts';
import { scanCommand } from './shell-scan.ts';
import { quickTokens } from './shell-tokens.ts';

export interface Redirect {
  op: string;
  target: string;
  heredoc?: HereDoc;
}

export interface Segment {
  /** Words in order (assignments, command, arguments), markers kept; redirections apart. */
  words: string[];
  redirects: Redirect[];
  /** Its input comes through a pipe from the segment before. */
  piped: boolean;
  /** `name() …`: defines a function. */
  defines: boolean;
  /** Filled in by commandView. */
  view?: CommandView;
  /** Index in `scan.inner` when the segment runs inside a substitution. */
  substitution?: number;
}

export interface ParsedCommand {
  segments: Segment[];
  scan: Scan;
}

const REDIRECTS = new Set(['>', '>>', '>|', '>&', '&>', '&>>', '<', '<&', '<>', '<<', '<<-', '<<<']);
const PIPES = new Set(['|', '|&']);
const MARKS = new RegExp(`[${ANSI_MARK}${BRACE_MARK}${GLOB_MARK}]`, 'g');
const SENTINEL = new RegExp(`${VAR_OPEN}([^${VAR_CLOSE}]*)${VAR_CLOSE}`, 'g');

type Entry = ReturnType<typeof parse>[number];

/** Never throws: a parse failure leaves the words shell-quote could not split as one segment. */
export function parseCommand(command: string): ParsedCommand {
  let scan: Scan;
  try {
    scan = scanCommand(command);
  } catch {
    // Only nesting deep enough to exhaust the stack gets here.
    scan = { text: command, opaque: ['a command nested too deeply to read'], inner: [], heredocs: [] };
  }
  // One parse for the command and its substitutions' texts; a mark between them tells the
  // segments of each substitution apart.
  const text =
    scan.inner.length > 0 ? [scan.text, ...scan.inner].join(` ; ${SUBSTITUTION_MARK} ; `) : scan.text;
  let entries: Entry[];
  try {
    entries = quickTokens(text) ?? parse(text);
  } catch {
    scan.opaque.push('a command the parser could not read');
    entries = text.split(/[\s;&|<>()]+/).filter((w) => w !== '');
  }
  return { segments: toSegments(entries, scan), scan };
}

/** Between substitution texts in what is parsed; a control character, so never in a command. */
const SUBSTITUTION_MARK = '\u0004';

/** Every property set from the start, so all segments share one shape (the hot path reads them). */
const newSegment = (piped: boolean): Segment => ({
  words: [],
  redirects: [],
  piped,
  defines: false,
  view: undefined,
  substitution: undefined,
});

function toSegments(entries: Entry[], scan: Scan): Segment[] {
  const segments: Segment[] = [];
  let current: Segment = newSegment(false);
  let redirect: string | undefined;
  let substitution: number | undefined;
  const close = (piped: boolean) => {
    if (redirect) current.redirects.push({ op: redirect, target: '' });
    redirect = undefined;
    if (current.words.length > 0 || current.redirects.length > 0) {
      if (substitution !== undefined) current.substitution = substitution;
      segments.push(current);
    }
    current = newSegment(piped);
  };
  for (let k = 0; k < entries.length; k++) {
    const entry = entries[k];
    let word: string | undefined;
    if (typeof entry === 'string') word = entry;
    else if (entry && 'op' in entry) {
      if (entry.op === 'glob') word = GLOB_MARK + (entry as { pattern: string }).pattern;
      else if (REDIRECTS.has(entry.op)) {
        if (redirect) current.redirects.push({ op: redirect, target: '' });
        redirect = entry.op;
        continue;
      } else if (entry.op === '(' && isOp(entries[k + 1], ')')) {
        current.defines = true;
        k++;
        continue;
      } else {
        close(PIPES.has(entry.op));
        continue;
      }
    }
    if (word === undefined) continue;
    if (word === SUBSTITUTION_MARK) {
      close(false);
      substitution = substitution === undefined ? 0 : substitution + 1;
      continue;
    }
    if (redirect) {
      const doc = word.startsWith(HEREDOC_MARK) ? scan.heredocs[Number(word.slice(1))] : undefined;
      current.redirects.push(
        doc ? { op: redirect, target: doc.delimiter, heredoc: doc } : { op: redirect, target: word },
      );
      redirect = undefined;
      continue;
    }
    // `2>file`: shell-quote splits the descriptor off as a word of its own.
    if (isRedirect(entries[k + 1]) && /^\d+$/.test(word)) continue;
    current.words.push(word);
  }
  close(false);
  return segments;
}

const isOp = (entry: Entry | undefined, op: string) =>
  typeof entry === 'object' && entry !== null && 'op' in entry && entry.op === op;
const isRedirect = (entry: Entry | undefined) =>
  typeof entry === 'object' && entry !== null && 'op' in entry && REDIRECTS.has(entry.op);

// ---- words ----

/** The word without ANSI-C, brace and glob markers (variable markers stay). */
export const unmark = (word: string): string =>
  word.includes(ANSI_MARK) || word.includes(BRACE_MARK) || word.includes(GLOB_MARK)
    ? word.replace(MARKS, '')
    : word;

export const hasExpansion = (word: string): boolean => word.includes(VAR_OPEN);

/** Names of the variables a word expands, e.g. ["x", "!cmd"]. */
export function expansions(word: string): string[] {
  const names: string[] = [];
  let at = word.indexOf(VAR_OPEN);
  while (at >= 0) {
    const end = word.indexOf(VAR_CLOSE, at);
    if (end < 0) break;
    names.push(word.slice(at + 1, end));
    at = word.indexOf(VAR_OPEN, end);
  }
  return names;
}

/** A word as the owner would read it: `$x` for a variable, `$(…)` for a substitution. */
export function display(word: string, short = true): string {
  const shown = unmark(word).replace(SENTINEL, (_, name: string) =>
    name === '!cmd' ? '$(…)' : name === '!proc' ? '<(…)' : name.startsWith('!') ? `\${…}` : `$${name}`,
  );
  return short && shown.length > 60 ? `${shown.slice(0, 57)}…` : shown;
}

// ---- the command of a segment ----

const SKIPPED = new Set([
  '!',
  '{',
  '}',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  'esac',
]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;

export interface CommandView {
  /** `NAME=value` words before the command. */
  assignments: string[];
  /** `for`, `select`, `case`, `function`, `coproc` when the segment starts with one. */
  keyword?: string;
  /** The command word and its arguments. */
  argv: string[];
}

export const isAssignment = (word: string): boolean => ASSIGNMENT.test(word);

/** The segment's assignments, leading keyword and command (computed once per segment). */
export function commandView(segment: Segment): CommandView {
  segment.view ??= viewOf(segment.words);
  return segment.view;
}

function viewOf(words: string[]): CommandView {
  const assignments: string[] = [];
  let i = 0;
  for (; i < words.length; i++) {
    const w = words[i] as string;
    if (SKIPPED.has(w)) continue;
    if (isAssignment(w)) assignments.push(w);
    else break;
  }
  const first = words[i];
  if (
    first === 'for' ||
    first === 'select' ||
    first === 'case' ||
    first === 'function' ||
    first === 'coproc'
  ) {
    return { assignments, keyword: first, argv: words.slice(i + 1) };
  }
  return { assignments, argv: words.slice(i) };
}
