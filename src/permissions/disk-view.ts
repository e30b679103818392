// What the policy guard looks up on disk at judgement time: where a path really leads (symlinks
// resolved) and what a glob matches now. Only paths inside the workspace are looked up; a
// workspace that does not exist is never touched again during the command.
import { readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { expandGlob, type GlobBudget, globBudget, lstatOf } from './glob-expand.ts';

export interface DiskView {
  /** The workspace as given (resolved). */
  workspace: string;
  /** The workspace as it really is (symlinks resolved), looked up on first need. */
  real(): string;
  /** Folders relative paths may be relative to: the workspace and every `cd` target seen. */
  folders: string[];
  /** A `cd` went somewhere unknown: what relative globs match cannot be known. */
  lost: boolean;
  budget: GlobBudget;
}

/** The view for one command, or undefined if the workspace is not there to look at. */
export function diskView(workspace: string): DiskView | undefined {
  // A missing workspace is the common case in tests and benchmarks: answer it without an exception.
  if (!lstatOf(workspace)) return undefined;
  let real: string | undefined;
  return {
    workspace,
    real: () => {
      real ??= realpath(workspace) ?? workspace;
      return real;
    },
    folders: [workspace],
    lost: false,
    budget: globBudget(),
  };
}

function realpath(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

const inside = (root: string, path: string) => path === root || path.startsWith(`${root}/`);

/** What is at a path in the workspace: whether it exists, and where it leads if through a link. */
interface Found {
  exists: boolean;
  /** Set when a link is on the way: the real place (for a path not there yet, where it would be). */
  real?: string;
}

/**
 * `path` relative to `folder`, walked from the workspace one component at a time (one lstat
 * each, cheaper than realpath), so a link anywhere on the way is found.
 */
function lookUp(view: DiskView, folder: string, path: string): Found {
  let abs = isAbsolute(path) ? resolve(path) : resolve(folder, path);
  if (!inside(view.workspace, abs)) {
    const real = view.real();
    if (!inside(real, abs)) return { exists: false };
    abs = view.workspace + abs.slice(real.length);
  }
  let at = view.workspace;
  for (const part of abs.slice(view.workspace.length + 1).split('/')) {
    if (part === '') continue;
    at = `${at}/${part}`;
    const stat = lstatOf(at);
    if (!stat) return { exists: false };
    if (stat.isSymbolicLink()) return { exists: true, real: through(abs) };
  }
  return { exists: true };
}

/** Where a path with a link on the way leads; for a path not there yet, where it would be made. */
function through(abs: string): string | undefined {
  const real = realpath(abs);
  if (real) return real;
  const parent = realpath(dirname(abs));
  if (parent) {
    const made = join(parent, basename(abs));
    return lstatOf(made)?.isSymbolicLink() ? dangling(made) : made;
  }
  return dangling(abs);
}

/** Where a link to nothing leads: writing through it creates its target. */
function dangling(link: string): string | undefined {
  let at = link;
  for (let hop = 0; hop < 16; hop++) {
    let next: string;
    try {
      next = resolve(dirname(at), readlinkSync(at));
    } catch {
      return undefined;
    }
    if (!lstatOf(next)?.isSymbolicLink()) {
      const parent = realpath(dirname(next));
      return parent ? join(parent, basename(next)) : next;
    }
    at = next;
  }
  return at;
}

/**
 * Whether `path` is there (relative to any folder it may be relative to), and the real places it
 * leads to through links, as paths to judge: relative to the workspace when inside it, absolute
 * when not (none when no link is on the way).
 */
export function lookUpPath(view: DiskView, path: string): { there: boolean; targets: string[] } {
  const targets: string[] = [];
  let there = false;
  for (const folder of isAbsolute(path) ? [view.workspace] : view.folders) {
    const { exists, real } = lookUp(view, folder, path);
    there ||= exists;
    if (real === undefined) continue;
    const root = view.real();
    targets.push(inside(root, real) ? real.slice(root.length + 1) || '.' : real);
  }
  return { there, targets };
}

/**
 * What a glob matches now, from every folder it may be relative to; undefined when that cannot
 * be known (a bound was hit, or a `cd` went somewhere unknown).
 */
export function globMatches(view: DiskView, pattern: string): string[] | undefined {
  if (view.lost && !isAbsolute(pattern)) return undefined;
  const out: string[] = [];
  for (const folder of isAbsolute(pattern) ? [view.workspace] : view.folders) {
    const found = expandGlob(pattern, folder, view.budget);
    if (!found) return undefined;
    out.push(...found.filter((f) => f !== pattern));
  }
  return out;
}

/** A `cd` to `path`: later relative paths may be relative to it. */
export function changeFolder(view: DiskView, path: string | undefined): void {
  if (path === undefined || path.includes('\u0001')) {
    view.lost = true;
    return;
  }
  const folder = resolve(view.folders.at(-1) ?? view.workspace, path);
  if (!view.folders.includes(folder)) view.folders.push(folder);
}
