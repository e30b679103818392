// Layer 1, the policy guard: hard denials, never overridable. It judges path-shaped tokens only (so
// `grep credentials notes.txt` runs), after the shell's own resolution: quotes, escapes, $IFS,
// brace expansion and variables assigned earlier in the same command; globs by what they could
// match; the parts of an argument after `=`, `@` and `ref:` too.
import { expandBraces } from './brace-expansion.ts';
import { isKeyFileName, refusePath } from './path-rules.ts';
import { BRACE_MARK, GLOB_MARK, VAR_CLOSE, VAR_OPEN } from './shell-marks.ts';
import {
  commandView,
  display,
  expansions,
  isAssignment,
  type ParsedCommand,
  type Segment,
  unmark,
} from './shell-parse.ts';

/** Commands whose arguments are text, never paths they open. */
const TEXT_ARGS = new Set(['echo', 'printf', 'tr', 'seq', 'sleep', 'true', 'false', ':', 'expr', 'basename']);
const DUPLICATE = /^(?:\d+|-)$/;
const MAX_VARIANTS = 32;

type Vars = Map<string, string[]>;

/**
 * Why the guard refuses this shell command, or undefined. `writes[i]` says segment i may change
 * files (the classifier scored it above 0); its paths are then judged as written paths.
 */
export function guardCommand(
  parsed: ParsedCommand,
  workspace: string,
  writes: boolean[] = [],
): string | undefined {
  const vars: Vars = new Map();
  for (const [index, segment] of parsed.segments.entries()) {
    const refused = guardSegment(segment, writes[index] === true, vars, workspace);
    if (refused) return refused;
  }
  return undefined;
}

/** One segment's words and redirections; `vars` carries assignments on to later segments. */
function guardSegment(segment: Segment, write: boolean, vars: Vars, workspace: string): string | undefined {
  const view = commandView(segment);
  for (const assignment of view.assignments) {
    const refused = guardWord(assignment, vars, workspace, false, write);
    if (refused) return refused;
    assign(vars, assignment);
  }
  if (view.keyword === 'for' || view.keyword === 'select') {
    const [name, marker, ...values] = view.argv;
    if (name && marker === 'in')
      vars.set(
        name,
        values.flatMap((v) => variants(v, vars)),
      );
  }
  const program = view.argv[0] ? unmark(view.argv[0]) : '';
  const args = view.argv.slice(1);
  const text = textWords(program, args);
  for (let k = 0; k < view.argv.length; k++) {
    if (text.has(k - 1)) continue;
    const refused = guardWord(view.argv[k] as string, vars, workspace, false, write);
    if (refused) return refused;
  }
  if (program === 'cd' || program === 'pushd') {
    const target = args.filter((a) => !a.startsWith('-'));
    if (target.length === 0 && !args.includes('-'))
      return `${program} with no folder goes to the home folder`;
    // Inside .git, plain relative names (`mv x config`) would rewrite git's own configuration.
    if (target.some((t) => unmark(t).split('/').includes('.git'))) return `${program} into .git is refused`;
  }
  if (program === 'read' || program === 'mapfile' || program === 'readarray') {
    for (const name of args) if (!name.startsWith('-')) vars.delete(name);
  }
  if (program === 'export' || program === 'local' || program === 'declare' || program === 'typeset') {
    for (const arg of args) if (isAssignment(arg)) assign(vars, arg);
  }
  for (const r of segment.redirects) {
    const duplicate = (r.op === '>&' || r.op === '<&') && DUPLICATE.test(r.target);
    if (r.heredoc || r.op === '<<<' || duplicate) continue;
    const refused = guardWord(r.target, vars, workspace, true, r.op !== '<' && r.op !== '<&');
    if (refused) return refused;
  }
  return undefined;
}

/** Value-taking short options of the pattern-first tools, so the pattern is found. */
const PATTERN_FIRST: Record<string, { valued: string; pattern: string; file: string }> = {
  grep: { valued: 'efmABCdD', pattern: 'e', file: 'f' },
  rg: { valued: 'efgmABCtTMrjEd', pattern: 'e', file: 'f' },
  sed: { valued: 'efl', pattern: 'e', file: 'f' },
  awk: { valued: 'Fvfe', pattern: 'e', file: 'f' },
  jq: { valued: 'fL', pattern: '', file: 'f' },
};
for (const alias of ['egrep', 'fgrep', 'zgrep', 'ag', 'ack'])
  PATTERN_FIRST[alias] = PATTERN_FIRST.grep as never;
for (const alias of ['gawk', 'mawk', 'nawk']) PATTERN_FIRST[alias] = PATTERN_FIRST.awk as never;
PATTERN_FIRST.gsed = PATTERN_FIRST.sed as never;

/**
 * Indexes of arguments that are text, not paths: everything for echo-like commands; for grep,
 * rg, sed, awk and jq their pattern or program (the first operand, or the values of -e).
 */
const NONE: ReadonlySet<number> = new Set();

function textWords(program: string, args: string[]): ReadonlySet<number> {
  if (!TEXT_ARGS.has(program) && !Object.hasOwn(PATTERN_FIRST, program)) return NONE;
  const out = new Set<number>();
  if (TEXT_ARGS.has(program)) {
    for (let k = 0; k < args.length; k++) out.add(k);
    return out;
  }
  const spec = Object.hasOwn(PATTERN_FIRST, program) ? PATTERN_FIRST[program] : undefined;
  if (!spec) return out;
  let explicit = false;
  for (let k = 0; k < args.length; k++) {
    const a = args[k] as string;
    if (a === '--') {
      if (!explicit && k + 1 < args.length) out.add(k + 1);
      return out;
    }
    if (/^--(?:regexp|expression|source)=/.test(a)) {
      explicit = true;
      out.add(k);
    } else if (/^--(?:file|from-file)/.test(a)) explicit = true;
    else if (/^--(?:arg|argjson|slurpfile|rawfile)$/.test(a)) k += 2;
    else if (a.startsWith('-') && a.length > 1 && !a.startsWith('--')) {
      const flag = a[1] as string;
      if (spec.file.includes(flag)) explicit = true;
      if (spec.pattern.includes(flag)) {
        explicit = true;
        if (a.length === 2) out.add(k + 1);
        else out.add(k);
      }
      if (spec.valued.includes(flag) && a.length === 2) k++;
    } else if (!a.startsWith('-')) {
      if (!explicit) out.add(k);
      return out;
    }
  }
  return out;
}

function assign(vars: Vars, assignment: string) {
  const eq = assignment.indexOf('=');
  const name = assignment.slice(0, eq).replace(/\+$/, '');
  vars.set(name, variants(assignment.slice(eq + 1), vars));
}

/** Why `word` is refused; `forced` judges it as a path even if it does not look like one. */
export function guardWord(
  word: string,
  vars: Vars,
  workspace: string,
  forced: boolean,
  write = false,
): string | undefined {
  // An unquoted glob names files whatever its shape: `id_*` is judged by what it could match.
  const whole = forced || word.includes(GLOB_MARK);
  if (!whole && !mightBePath(word)) return undefined;
  if (!word.includes(VAR_OPEN) && !word.includes(BRACE_MARK))
    return judgeVariant(unmark(word), workspace, whole, write);
  for (const variant of variants(word, vars)) {
    const refused = judgeVariant(variant, workspace, whole, write);
    if (refused) return refused;
  }
  return undefined;
}

function judgeVariant(
  variant: string,
  workspace: string,
  whole: boolean,
  write: boolean,
): string | undefined {
  const refused = judgePiece(variant, workspace, whole, write);
  if (refused || (!/[=@:]/.test(variant) && variant[0] !== '-')) return refused;
  for (const piece of pieces(variant)) {
    const found = judgePiece(piece, workspace, false, write);
    if (found) return found;
  }
  return undefined;
}

const mightBePath = (word: string) => /[/~.=@]/.test(word) || word.includes(VAR_OPEN) || isKeyFileName(word);

/** The candidate values of a word: known variables substituted, braces expanded. */
function variants(word: string, vars: Vars): string[] {
  if (!word.includes(VAR_OPEN) && !word.includes(BRACE_MARK)) return [unmark(word)];
  let out = [word];
  if (word.includes(VAR_OPEN)) {
    for (const name of new Set(expansions(word))) {
      const values = vars.get(name);
      if (!values || values.length === 0) continue;
      const token = VAR_OPEN + name + VAR_CLOSE;
      out = out.flatMap((w) => values.map((v) => w.split(token).join(v))).slice(0, MAX_VARIANTS);
    }
  }
  return out.flatMap((w) => (w.includes(BRACE_MARK) ? expandBraces(unmark(w)) : [unmark(w)]));
}

/** What follows `=`, `@`, `:` or `ref:` in a word, and an attached short option's value. */
function pieces(word: string): string[] {
  const list: string[] = [];
  const eq = word.indexOf('=');
  if (eq >= 0) list.push(word.slice(eq + 1));
  const at = word.indexOf('@');
  if (at >= 0) list.push(word.slice(at + 1));
  if (word.includes(':') && !/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(word)) {
    for (const part of word.split(':').slice(1)) if (part !== '') list.push(part);
  }
  const ref = word.indexOf('ref:');
  if (ref >= 0) list.push(word.slice(ref + 4).trimStart());
  if (/^-[A-Za-z][/~.]./.test(word)) list.push(word.slice(2));
  return list;
}

function judgePiece(piece: string, workspace: string, forced: boolean, write: boolean): string | undefined {
  if (piece.startsWith(VAR_OPEN)) {
    const end = piece.indexOf(VAR_CLOSE);
    const name = piece.slice(1, end);
    const rest = piece.slice(end + 1);
    if (name === 'HOME' || name === '!expr:HOME') return `$HOME${rest} is in the home folder`;
    if (rest.startsWith('/') && !name.startsWith('!cmd') && name !== 'PWD') {
      return `$${name.replace(/^!expr:/, '')}${rest.slice(0, 40)} starts with a variable that can point outside the workspace`;
    }
  }
  const text = piece.includes(VAR_OPEN) ? display(piece, false) : piece;
  if (!forced && !pathShaped(text)) return undefined;
  return refusePath(text, { workspace, forWrite: write });
}

function pathShaped(text: string): boolean {
  return (
    text.includes('/') ||
    text.startsWith('.') ||
    text.startsWith('~') ||
    /\.[A-Za-z0-9_-]+$/.test(text) ||
    isKeyFileName(text)
  );
}

/** write_file's path: relative to the workspace; absolute only inside it; never .env or .git. */
export function guardWritePath(path: unknown, workspace: string): string | undefined {
  if (typeof path !== 'string' || path === '') return 'write_file needs a path';
  if (path.includes('\u0000')) return 'the path contains a NUL byte';
  return refusePath(path, { workspace, forWrite: true });
}

const PATH_KEY = /(?:^|_)(?:path|paths|file|files|filename|dir|directory|folder|cwd)$/i;

/** Other tools: arguments whose name says they hold a path are judged as paths. */
export function guardToolArgs(args: Record<string, unknown>, workspace: string): string | undefined {
  for (const [key, value] of Object.entries(args)) {
    if (!PATH_KEY.test(key)) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item !== 'string') continue;
      const refused = refusePath(item, { workspace });
      if (refused) return refused;
    }
  }
  return undefined;
}
