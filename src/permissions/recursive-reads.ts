// Programs that read every file under a folder (`grep -r TOKEN .`, `rg --hidden x`, `diff -r a b`):
// the guard walks what they would read, at judgement time, and refuses when a secret is there.
// Bounded; past the bound the answer is unknown, and an unknown walk is refused (the model can
// name the folders to search instead).
import { type Dirent, readdirSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { type DiskView, lookUpPath } from './disk-view.ts';
import { globBudget } from './glob-expand.ts';
import { refusePath } from './path-rules.ts';
import { secretName, secretPlace } from './secret-names.ts';

export interface RecursiveRead {
  /** The folders (or files) it reads under, as written; `.` when none is named. */
  roots: string[];
  /** It reads dot-files too. */
  hidden: boolean;
  /** It follows links found on the way (`grep -R`, `rg -L`). */
  follow: boolean;
}

const GREPS = new Set(['grep', 'egrep', 'fgrep', 'zgrep', 'rgrep']);
/** Every program judged here, and xargs (which feeds one a list): other commands skip it all. */
export const READS_ALL: ReadonlySet<string> = new Set([
  ...GREPS,
  'rg',
  'ag',
  'ack',
  'pt',
  'diff',
  'find',
  'xargs',
  'tar',
  'bsdtar',
  'zip',
]);
/** Short options whose value is the next word, per program (so the value is not taken for a folder). */
const VALUED: Record<string, string> = {
  grep: 'efmABCdDX',
  rg: 'efgmABCtTMrjEd',
  ag: 'AfBCGgm',
  ack: 'ABCgm',
  diff: 'CFIUxXSL',
};

/** What `program args` reads recursively, or undefined if it does not. `text`: indexes of its pattern. */
export function recursiveRead(
  program: string,
  args: string[],
  text: Pick<ReadonlySet<number>, 'has'>,
): RecursiveRead | undefined {
  const flags = args.filter((a) => a.startsWith('-') && a !== '-');
  const short = (letters: RegExp) => flags.some((f) => !f.startsWith('--') && letters.test(f.slice(1)));
  const long = (names: RegExp) => flags.some((f) => names.test(f));
  let kind: string;
  let hidden = true;
  let follow = false;
  if (GREPS.has(program)) {
    const recursive =
      program === 'rgrep' ||
      short(/^[A-Za-z]*[rR]/) ||
      long(/^--(?:recursive|dereference-recursive|directories=recurse)$/) ||
      args.some((a, k) => a === '-d' && args[k + 1] === 'recurse');
    if (!recursive) return undefined;
    kind = 'grep';
    follow = short(/^[A-Za-z]*R/) || long(/^--dereference-recursive$/);
  } else if (program === 'rg') {
    kind = 'rg';
    hidden = short(/^[A-Za-z]*(?:\.|uu)/) || long(/^--(?:hidden|unrestricted)$/);
    follow = short(/^[A-Za-z]*L/) || long(/^--follow$/);
  } else if (program === 'ag' || program === 'ack' || program === 'pt') {
    kind = program === 'pt' ? 'ag' : program;
    hidden = program === 'ack' || short(/^[A-Za-z]*u/) || long(/^--(?:hidden|unrestricted|all-types)$/);
    follow = long(/^--follow$/) || (program !== 'ack' && short(/^[A-Za-z]*f/));
  } else if (program === 'tar' || program === 'bsdtar') {
    return archived(args);
  } else if (program === 'zip') {
    if (!short(/^[A-Za-z]*r/) && !long(/^--recurse-paths$/)) return undefined;
    const files = args.filter((a) => !a.startsWith('-'));
    return {
      roots: files.slice(1).length > 0 ? files.slice(1) : ['.'],
      hidden: true,
      follow: !short(/^[A-Za-z]*y/),
    };
  } else if (program === 'find') {
    // `find . -exec cat {} +` reads every file it finds.
    const exec = args.findIndex((a) => /^-(?:exec|execdir|ok|okdir)$/.test(a));
    return exec < 0 ? undefined : listedRead(args[exec + 1] ?? '', ['find', ...args]);
  } else if (program === 'diff') {
    if (!short(/^[A-Za-z]*r/) && !long(/^--recursive$/)) return undefined;
    kind = 'diff';
  } else return undefined;
  return { roots: operands(args, text, VALUED[kind] ?? ''), hidden, follow };
}

/** `tar c…`: every file under its operands goes into the archive (the archive name is not one). */
function archived(args: string[]): RecursiveRead | undefined {
  const first = args[0] ?? '';
  const oldStyle = first !== '' && !first.startsWith('-') && /^[A-Za-z]+$/.test(first);
  const clusters = oldStyle ? [first] : args.filter((a) => /^-[A-Za-z]+$/.test(a));
  const create = clusters.some((c) => c.includes('c')) || args.includes('--create');
  if (!create) return undefined;
  const roots: string[] = [];
  let skipNext = oldStyle && first.includes('f');
  for (const a of oldStyle ? args.slice(1) : args) {
    if (skipNext) skipNext = false;
    else if (/^-[A-Za-z]+$/.test(a)) skipNext = a.endsWith('f') || a === '-C';
    else if (!a.startsWith('-')) roots.push(a);
  }
  const follow = clusters.some((c) => c.includes('h')) || args.includes('--dereference');
  return { roots: roots.length > 0 ? roots : ['.'], hidden: true, follow };
}

/** Programs that, given file names, read no content worth keeping secret. */
const METADATA = new Set([
  'wc',
  'ls',
  'stat',
  'du',
  'file',
  'echo',
  'printf',
  'basename',
  'dirname',
  'realpath',
  'readlink',
  'test',
  '[',
  'true',
  'md5sum',
  'sha1sum',
  'sha256sum',
  'sha512sum',
  'cksum',
]);

/**
 * `LISTER … | xargs reader`: what the reader opens is what the lister lists (find, ls, rg --files,
 * fd); undefined for a reader that opens no content or a list the guard cannot follow.
 */
export function listedRead(reader: string, lister: string[]): RecursiveRead | undefined {
  if (METADATA.has(reader)) return undefined;
  const [name, ...args] = lister;
  const flags = args.filter((a) => a.startsWith('-'));
  if (name === 'find') {
    const end = args.findIndex((a) => a.startsWith('-') || a === '(' || a === '!');
    const roots = (end < 0 ? args : args.slice(0, end)).filter((a) => !['-H', '-L', '-P'].includes(a));
    return {
      roots: roots.length > 0 ? roots : ['.'],
      hidden: true,
      follow: flags.some((f) => f === '-L' || f === '-follow'),
    };
  }
  if (name === 'ls' || name === 'fd' || name === 'fdfind' || (name === 'rg' && flags.includes('--files'))) {
    const hidden = flags.some((f) => (name === 'ls' ? /^-[A-Za-z]*[aA]/ : /^-[A-Za-z]*H|^--hidden$/).test(f));
    const roots = name === 'rg' ? [] : args.filter((a) => !a.startsWith('-'));
    return { roots: roots.length > 0 && name !== 'fd' ? roots : ['.'], hidden, follow: false };
  }
  return undefined;
}

function operands(args: string[], text: Pick<ReadonlySet<number>, 'has'>, valued: string): string[] {
  const out: string[] = [];
  let dashes = false;
  for (let k = 0; k < args.length; k++) {
    const a = args[k] as string;
    if (!dashes && a === '--') dashes = true;
    else if (!dashes && a.startsWith('-') && a.length > 1) {
      if (!a.startsWith('--') && a.length === 2 && valued.includes(a[1] as string)) k++;
    } else if (!text.has(k)) out.push(a);
  }
  return out.length > 0 ? out : ['.'];
}

/** One recursive read's walk: entries read and milliseconds. */
const WALK_ENTRIES = 20_000;
const WALK_MS = 80;

/** Folders a walk never enters unless it follows links: no owner's secret is kept there by name. */
const SKIPPED = new Set(['.git', 'node_modules']);

/**
 * Why reading under `root` recursively is refused: a secret on the way, a followed link out, or
 * too much to look at within the budget.
 */
export function refuseRecursive(view: DiskView, root: string, read: RecursiveRead): string | undefined {
  const start = isAbsolute(root) ? root : resolve(view.folders.at(-1) ?? view.workspace, root);
  const budget = globBudget(WALK_ENTRIES, WALK_MS);
  const queue: Array<{ abs: string; rel: string }> = [{ abs: start, rel: root.replace(/\/+$/, '') }];
  while (queue.length > 0) {
    const { abs, rel } = queue.shift() as { abs: string; rel: string };
    if (performance.now() > budget.deadline) return tooMuch(root);
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      continue;
    }
    budget.entries -= entries.length;
    if (budget.entries < 0) return tooMuch(root);
    const parent = rel.split('/').at(-1) ?? '';
    for (const entry of entries) {
      const name = String(entry.name);
      if (!read.hidden && name.startsWith('.')) continue;
      const path = rel === '' || rel === '.' ? name : `${rel}/${name}`;
      const secret = secretName(name) ?? secretPlace(parent, name);
      if (secret) return `reading everything under ${root} would read ${path}: ${secret}`;
      if (entry.isSymbolicLink()) {
        if (!read.follow) continue;
        for (const target of lookUpPath(view, path).targets) {
          const refused = refusePath(target, { workspace: view.real() });
          if (refused) return `reading everything under ${root} follows ${path}: ${refused}`;
        }
        // A followed link to a folder is read through (a loop ends at the budget).
        queue.push({ abs: `${abs}/${name}`, rel: path });
      } else if (entry.isDirectory() && (read.follow || !SKIPPED.has(name))) {
        queue.push({ abs: `${abs}/${name}`, rel: path });
      }
    }
  }
  return undefined;
}

const tooMuch = (root: string) =>
  `${root} holds more files than the guard can check for secrets before a recursive read; name the folders to search`;
