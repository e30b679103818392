// Filename expansion against the real workspace at judgement time, as bash 5.2 does it with its
// defaults (globskipdots on, dotglob, nocaseglob, extglob, globstar, failglob and nullglob off):
// an unmatched pattern stays as written. Bounded in entries read, depth and time; past a bound the
// answer is "unknown" and the guard judges the pattern alone, strictly.
import { lstatSync, readdirSync, type Stats, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { globParts, hasGlob, nameMatcher } from './glob-match.ts';

export interface GlobBudget {
  /** Directory entries that may still be read. */
  entries: number;
  /** performance.now() after which expansion gives up. */
  deadline: number;
}

export const MAX_GLOB_DEPTH = 24;

/** A budget for one command: a few thousand entries, a few tens of milliseconds. */
export const globBudget = (entries = 4096, ms = 60): GlobBudget => ({
  entries,
  deadline: performance.now() + ms,
});

/**
 * The words bash would pass for `pattern` run in `cwd`; the pattern itself if nothing matches;
 * undefined when a bound was hit (the answer is unknown).
 */
export function expandGlob(pattern: string, cwd: string, budget: GlobBudget): string[] | undefined {
  if (!hasGlob(pattern)) return [pattern];
  const segments = pattern.split('/');
  if (segments.length > MAX_GLOB_DEPTH) return undefined;
  // Each candidate: the text as bash prints it, and where it is on disk.
  let found: Array<{ text: string; at: string }> = [{ text: '', at: isAbsolute(pattern) ? '/' : cwd }];
  for (const [index, segment] of segments.entries()) {
    const last = index === segments.length - 1;
    const sep = index === 0 ? '' : '/';
    if (segment === '' || !hasGlob(segment)) {
      const literal = unescaped(segment);
      found = found.map((f) => ({ text: f.text + sep + literal, at: below(f.at, literal) }));
      continue;
    }
    const matches = nameMatcher(globParts(segment));
    const next: typeof found = [];
    for (const f of found) {
      if (performance.now() > budget.deadline) return undefined;
      const names = list(f.at);
      budget.entries -= names.length;
      if (budget.entries < 0) return undefined;
      for (const name of names) {
        if (matches(name)) next.push({ text: f.text + sep + name, at: below(f.at, name) });
      }
      if (!last && next.length > budget.entries) return undefined;
    }
    found = next;
    if (found.length === 0) break;
  }
  const trailing = segments.at(-1) === '';
  const exist = found.filter((f) => (trailing ? isDirectory(f.at) : exists(f.at))).map((f) => f.text);
  return exist.length > 0 ? exist.sort() : [unescaped(pattern)];
}

/** `dir/name` as written: path.join would turn `a/.` into `a`, which exists even when `a` is a file. */
const below = (dir: string, name: string) => (dir.endsWith('/') ? dir + name : `${dir}/${name}`);

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** lstat that answers undefined for anything not there, `a/b` under a file `a` included. */
export function lstatOf(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

const exists = (path: string) => lstatOf(path) !== undefined;
function isDirectory(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}
const unescaped = (text: string) => (text.includes('\\') ? text.replace(/\\(.)/g, '$1') : text);
