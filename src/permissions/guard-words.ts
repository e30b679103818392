// The policy guard's judgement of one word of a command: its values (variables, braces), the
// paths inside it (after `=`, `@`, `:`, attached option letters), each judged by its text, by
// where it really leads on disk and, for a glob, by what it could match and what it matches now.
import { expandBraces } from './brace-expansion.ts';
import { type DiskView, diskView, globMatches, lookUpPath } from './disk-view.ts';
import { hasGlob } from './glob-match.ts';
import { type Dialect, refusePath } from './path-rules.ts';
import { hasKeyFileName, isKeyFileName } from './secret-names.ts';
import { BRACE_MARK, GLOB_MARK, VAR_CLOSE, VAR_OPEN } from './shell-marks.ts';
import { display, expansions, unmark } from './shell-parse.ts';
import { urlOf } from './url-shape.ts';

const MAX_VARIANTS = 32;

export type Vars = Map<string, string[]>;

/** One command's judgement state. */
export interface GuardContext {
  workspace: string;
  vars: Vars;
  dialect: Dialect;
  /** The disk, looked at on first need; undefined when it is not looked at (or not there). */
  disk(): DiskView | undefined;
}

/** Records `NAME=value` so later words using $NAME are judged with its value. */
export function assign(vars: Vars, assignment: string): void {
  const eq = assignment.indexOf('=');
  const name = unmark(assignment.slice(0, eq)).replace(/\+$/, '');
  vars.set(name, variants(assignment.slice(eq + 1), vars));
}

/**
 * Why `word` is refused; `forced` judges it as a path even if it does not look like one;
 * `program` says it names the program run (found by name, not opened from the workspace).
 */
export function guardWord(
  word: string,
  ctx: GuardContext,
  forced: boolean,
  write = false,
  program = false,
): string | undefined {
  // A glob names files whatever its shape: `id_*` and `.[[:alpha:]]nv` are judged by what they match.
  const plain = unmark(word);
  const whole = forced || word.includes(GLOB_MARK) || hasGlob(plain);
  if (!whole && !mightBePath(word, plain)) {
    // A plain word can still be a link planted in the workspace (`notes` → /etc/shadow).
    // A plain word that names a file in the workspace is judged as that file (`cat token`).
    // A program found by name is not opened from the workspace.
    if (program || word.startsWith('-') || word.includes(VAR_OPEN)) return undefined;
    const disk = ctx.disk();
    if (!disk) return undefined;
    const found = lookUpPath(disk, plain);
    if (!found.there) return undefined;
    return refusePath(plain, pathOptions(ctx, write)) ?? judgeTargets(plain, found.targets, disk, write);
  }
  if (!word.includes(VAR_OPEN) && !word.includes(BRACE_MARK)) return judgeVariant(plain, ctx, whole, write);
  for (const variant of variants(word, ctx.vars)) {
    const refused = judgeVariant(variant, ctx, whole, write);
    if (refused) return refused;
  }
  return undefined;
}

function judgeVariant(
  variant: string,
  ctx: GuardContext,
  whole: boolean,
  write: boolean,
): string | undefined {
  const refused = judgePiece(variant, ctx, whole, write);
  if (refused || (!/[=@:,]/.test(variant) && variant[0] !== '-')) return refused;
  for (const piece of pieces(variant)) {
    const found = judgePiece(piece, ctx, false, write);
    if (found) return found;
  }
  return undefined;
}

const mightBePath = (word: string, plain: string) =>
  /[/~.=@]/.test(word) ||
  word.includes(VAR_OPEN) ||
  (word[0] === '-' ? hasKeyFileName(word) : isKeyFileName(plain));

/** The candidate values of a word: known variables substituted, braces expanded. */
export function variants(word: string, vars: Vars): string[] {
  if (!word.includes(VAR_OPEN) && !word.includes(BRACE_MARK)) return [unmark(word)];
  let out = [word];
  if (word.includes(VAR_OPEN)) {
    for (const name of new Set(expansions(word))) {
      const values = vars.get(name);
      if (!values || values.length === 0) continue;
      const token = VAR_OPEN + name + VAR_CLOSE;
      out = out.flatMap((w) => values.map((v) => w.split(token).join(v))).slice(0, MAX_VARIANTS);
    }
    // An unknown value may well be empty (an unset name, `$@`, `$(true)`): `.e${x}nv` is `.env`.
    out.push(...out.map(emptied).filter((w): w is string => w !== undefined));
  }
  return out.flatMap((w) => (w.includes(BRACE_MARK) ? expandBraces(unmark(w)) : [unmark(w)]));
}

/** Never empty: numbers. */
const NUMERIC = new Set(['!arith', '!len', '!count', '!status', '!pid']);
const SENTINELS = new RegExp(`${VAR_OPEN}([^${VAR_CLOSE}]*)${VAR_CLOSE}`, 'g');

/** The word with its unknown values empty, when one sits inside it (a leading one is judged as is). */
function emptied(word: string): string | undefined {
  if (word.indexOf(VAR_OPEN) <= 0 && word.indexOf(VAR_OPEN, 1) < 0) return undefined;
  let changed = false;
  const out = word.replace(SENTINELS, (token: string, name: string, at: number) => {
    if (at === 0 || NUMERIC.has(name)) return token;
    changed = true;
    return '';
  });
  return changed ? out : undefined;
}

/**
 * What follows `=`, `@`, `:`, `ref:` in a word; in an option word also what follows each leading
 * option letter (any letter may take an attached value: `-rf.env`, `-o/etc/x`) and each `,`.
 */
export function pieces(word: string): string[] {
  const list: string[] = [];
  const eq = word.indexOf('=');
  if (eq >= 0) list.push(word.slice(eq + 1));
  const at = word.indexOf('@');
  if (at >= 0) list.push(word.slice(at + 1));
  if (word.includes(':') && urlOf(word) === undefined) {
    for (const part of word.split(':').slice(1)) if (part !== '') list.push(part);
  }
  const ref = word.indexOf('ref:');
  if (ref >= 0) list.push(word.slice(ref + 4).trimStart());
  if (word[0] === '-') {
    for (let i = word[1] === '-' ? 2 : 1; i < word.length; i++) {
      // `cut -d/`, `awk -F/`: a one-character delimiter, not the root folder.
      if (!(i === word.length - 1 && 'dFts'.includes(word[i - 1] as string))) list.push(word.slice(i));
      if (!/[A-Za-z0-9]/.test(word[i] as string)) break;
    }
    if (word.includes(',')) for (const part of word.split(',').slice(1)) if (part !== '') list.push(part);
  }
  return list;
}

function judgePiece(piece: string, ctx: GuardContext, forced: boolean, write: boolean): string | undefined {
  if (piece.startsWith(VAR_OPEN)) {
    const end = piece.indexOf(VAR_CLOSE);
    const name = piece.slice(1, end);
    const rest = piece.slice(end + 1);
    if (name === 'HOME' || name === '!expr:HOME') return `$HOME${rest} is in the home folder`;
    if (rest.startsWith('/') && !name.startsWith('!cmd') && name !== 'PWD') {
      return `$${name.replace(/^!expr:/, '')}${rest.slice(0, 40)} starts with a variable that can point outside the workspace`;
    }
  }
  const known = !piece.includes(VAR_OPEN);
  const text = known ? piece : display(piece, false);
  if (!forced && !pathShaped(text)) return undefined;
  return known ? judgePath(text, ctx, write) : refusePath(text, pathOptions(ctx, write));
}

const pathOptions = (ctx: GuardContext, write: boolean) => ({
  workspace: ctx.workspace,
  forWrite: write,
  dialect: ctx.dialect,
});

/** A known path: by its text, then by where it really leads; a glob also by what it matches now. */
function judgePath(text: string, ctx: GuardContext, write: boolean): string | undefined {
  const opts = pathOptions(ctx, write);
  const disk = hasGlob(text) && !text.includes('://') ? ctx.disk() : undefined;
  if (!disk) return refusePath(text, opts) ?? judgeLinks(text, ctx, write);
  // First as if what it matches now will be judged (so a listing pattern may pass), then that.
  const lenient = refusePath(text, { ...opts, expanded: true });
  if (lenient) return lenient;
  const found = globMatches(disk, text);
  if (!found) return refusePath(text, opts);
  for (const match of found) {
    const refused = refusePath(match, opts) ?? judgeLinks(match, ctx, write);
    if (refused) return `${show(text)} matches what is refused: ${refused}`;
  }
  return undefined;
}

/** Where a path in the workspace really leads, judged: `.env.example` → `.env` is refused. */
function judgeLinks(text: string, ctx: GuardContext, write: boolean): string | undefined {
  const disk = text === '' || text.includes('://') ? undefined : ctx.disk();
  return disk ? judgeTargets(text, lookUpPath(disk, text).targets, disk, write) : undefined;
}

function judgeTargets(text: string, targets: string[], disk: DiskView, write: boolean): string | undefined {
  for (const real of targets) {
    const refused = refusePath(real, { workspace: disk.real(), forWrite: write });
    if (refused) return `${show(text)} is a link: ${refused}`;
  }
  return undefined;
}

/** Where a path another tool opens really leads, judged (the workspace looked at on disk). */
export function refuseLinked(path: string, workspace: string, write: boolean): string | undefined {
  const disk = diskView(workspace);
  if (!disk) return undefined;
  return judgeLinks(path, { workspace, vars: new Map(), dialect: 'any', disk: () => disk }, write);
}

const show = (path: string) => (path.length > 60 ? `${path.slice(0, 57)}…` : path);

function pathShaped(text: string): boolean {
  return (
    text.includes('/') ||
    text.startsWith('.') ||
    text.startsWith('~') ||
    /\.[A-Za-z0-9_-]+$/.test(text) ||
    isKeyFileName(text)
  );
}
