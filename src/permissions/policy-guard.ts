// Layer 1, the policy guard: hard denials, never overridable. It judges path-shaped tokens only (so
// `grep credentials notes.txt` runs), after the shell's own resolution: quotes, escapes, $IFS,
// brace expansion and variables assigned earlier in the same command; globs by what they could
// match; the parts of an argument after `=`, `@` and `ref:` too.
import { isKeyFileName, refusePath } from './path-rules.ts';
import { commandView, expansions, isAssignment, type ParsedCommand, unmark } from './shell-parse.ts';
import { BRACE_MARK, VAR_CLOSE, VAR_OPEN } from './shell-scan.ts';

/** Commands whose arguments are text, never paths they open. */
const TEXT_ARGS = new Set(['echo', 'printf', 'tr', 'seq', 'sleep', 'true', 'false', ':', 'expr', 'basename']);
const DUPLICATE = /^(?:\d+|-)$/;
const MAX_VARIANTS = 32;

type Vars = Map<string, string[]>;

/** Why the guard refuses this shell command, or undefined. */
export function guardCommand(parsed: ParsedCommand, workspace: string): string | undefined {
  const vars: Vars = new Map();
  for (const segment of parsed.segments) {
    const view = commandView(segment);
    for (const assignment of view.assignments) {
      const refused = guardWord(assignment, vars, workspace, false);
      if (refused) return refused;
      assign(vars, assignment);
    }
    if (view.keyword === 'for' || view.keyword === 'select') {
      const [name, marker, ...values] = view.argv;
      if (name && marker === 'in') vars.set(name, values.flatMap((v) => variants(v, vars)));
    }
    const program = view.argv[0] ? unmark(view.argv[0]) : undefined;
    const words = program && TEXT_ARGS.has(program) ? view.argv.slice(0, 1) : view.argv;
    for (const word of words) {
      const refused = guardWord(word, vars, workspace, false);
      if (refused) return refused;
    }
    if ((program === 'cd' || program === 'pushd') && view.argv.slice(1).every((a) => a.startsWith('-'))) {
      if (!view.argv.includes('-')) return `${program} with no folder goes to the home folder`;
    }
    if (program === 'read' || program === 'mapfile' || program === 'readarray') {
      for (const name of view.argv.slice(1)) if (!name.startsWith('-')) vars.delete(name);
    }
    if (program === 'export' || program === 'local' || program === 'declare' || program === 'typeset') {
      for (const arg of view.argv.slice(1)) if (isAssignment(arg)) assign(vars, arg);
    }
    for (const r of segment.redirects) {
      if (r.heredoc || r.op === '<<<' || ((r.op === '>&' || r.op === '<&') && DUPLICATE.test(r.target))) continue;
      const refused = guardWord(r.target, vars, workspace, true);
      if (refused) return refused;
    }
  }
  return undefined;
}

function assign(vars: Vars, assignment: string) {
  const eq = assignment.indexOf('=');
  const name = assignment.slice(0, eq).replace(/\+$/, '');
  vars.set(name, variants(assignment.slice(eq + 1), vars));
}

/** Why `word` is refused; `forced` judges it as a path even if it does not look like one. */
export function guardWord(word: string, vars: Vars, workspace: string, forced: boolean): string | undefined {
  if (!forced && !mightBePath(word)) return undefined;
  for (const variant of variants(word, vars)) {
    for (const piece of pieces(variant)) {
      const refused = judgePiece(piece, workspace, forced && piece === variant);
      if (refused) return refused;
    }
  }
  return undefined;
}

const mightBePath = (word: string) => /[/~.=@]/.test(word) || word.includes(VAR_OPEN) || isKeyFileName(word);

/** The candidate values of a word: known variables substituted, braces expanded. */
function variants(word: string, vars: Vars): string[] {
  let out = [word];
  if (word.includes(VAR_OPEN)) {
    for (const name of new Set(expansions(word))) {
      const values = vars.get(name);
      if (!values) continue;
      const token = VAR_OPEN + name + VAR_CLOSE;
      out = out.flatMap((w) => values.map((v) => w.split(token).join(v))).slice(0, MAX_VARIANTS);
    }
  }
  return out.flatMap((w) => (w.includes(BRACE_MARK) ? expandBraces(unmark(w)) : [unmark(w)]));
}

/** The word, and what follows `=`, `@` or `ref:` in it, and an attached short option's value. */
function pieces(word: string): string[] {
  const list = [word];
  const eq = word.indexOf('=');
  if (eq >= 0) list.push(word.slice(eq + 1));
  const at = word.indexOf('@');
  if (at >= 0) list.push(word.slice(at + 1));
  const ref = word.indexOf('ref:');
  if (ref >= 0) list.push(word.slice(ref + 4).trimStart());
  if (/^-[A-Za-z][/~.]./.test(word)) list.push(word.slice(2));
  return list;
}

function judgePiece(piece: string, workspace: string, forced: boolean): string | undefined {
  if (piece.startsWith(VAR_OPEN)) {
    const end = piece.indexOf(VAR_CLOSE);
    const name = piece.slice(1, end);
    const rest = piece.slice(end + 1);
    if (name === 'HOME' || name === '!expr:HOME') return `$HOME${rest} is in the home folder`;
    if (rest.startsWith('/') && !name.startsWith('!cmd') && name !== 'PWD') {
      return `$${name.replace(/^!expr:/, '')}${rest.slice(0, 40)} starts with a variable that can point outside the workspace`;
    }
  }
  const text = piece.includes(VAR_OPEN) ? piece.replace(/\u0001[^\u0002]*\u0002/g, '\u0001') : piece;
  if (!forced && !pathShaped(text)) return undefined;
  return refusePath(text, { workspace });
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

const RANGE = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])$/;

/** Bash brace expansion, bounded: `{a,b}c` → ac bc, `{1..3}` → 1 2 3. */
export function expandBraces(word: string, limit = 64): string[] {
  const open = findBrace(word);
  if (!open) return [word];
  const { start, end, options } = open;
  const head = word.slice(0, start);
  const tail = word.slice(end + 1);
  const out: string[] = [];
  for (const option of options) {
    for (const rest of expandBraces(head + option + tail, limit)) {
      out.push(rest);
      if (out.length >= limit) return out;
    }
  }
  return out;
}

function findBrace(word: string): { start: number; end: number; options: string[] } | undefined {
  for (let start = word.indexOf('{'); start >= 0; start = word.indexOf('{', start + 1)) {
    let depth = 0;
    const commas: number[] = [];
    for (let k = start + 1; k < word.length; k++) {
      const c = word[k];
      if (c === '{') depth++;
      else if (c === ',' && depth === 0) commas.push(k);
      else if (c === '}') {
        if (depth > 0) {
          depth--;
          continue;
        }
        const body = word.slice(start + 1, k);
        if (commas.length > 0) {
          const bounds = [start, ...commas, k];
          const options = bounds.slice(1).map((b, i) => word.slice((bounds[i] as number) + 1, b));
          return { start, end: k, options };
        }
        const range = RANGE.exec(body);
        if (range) return { start, end: k, options: rangeOf(range[1] as string, range[2] as string) };
        break;
      }
    }
  }
  return undefined;
}

function rangeOf(from: string, to: string): string[] {
  const numeric = /\d/.test(from);
  const a = numeric ? Number(from) : from.charCodeAt(0);
  const b = numeric ? Number(to) : to.charCodeAt(0);
  const step = a <= b ? 1 : -1;
  const out: string[] = [];
  for (let v = a; out.length < 64; v += step) {
    out.push(numeric ? String(v) : String.fromCharCode(v));
    if (v === b) break;
  }
  return out;
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
