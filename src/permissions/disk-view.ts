// What the policy guard looks up on disk at judgement time: where a path really leads (symlinks
// resolved) and what a glob matches now. Only paths inside the workspace are looked up; a
// workspace that does not exist is never touched again during the command.
import { readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { expandGlob, type GlobBudget, globBudget, lstatOf } from './glob-expand.ts';

export interface DiskView {
  /** The workspace as given (resolved) and as it really is (symlinks resolved). */
  workspace: string;
  real: string;
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
  const real = realpath(workspace);
  if (!real) return undefined;
  return { workspace, real, folders: [workspace], lost: false, budget: globBudget() };
}

function realpath(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

const inside = (root: string, path: string) => path === root || path.startsWith(`${root}/`);

/** Where `path` (relative to `folder`) really leads, if that differs from what it says; for a
 * path that does not exist yet (a write), where its folder leads. */
function target(view: DiskView, folder: string, path: string, write: boolean): string | undefined {
  const abs = isAbsolute(path) ? resolve(path) : resolve(folder, path);
  if (!inside(view.workspace, abs) && !inside(view.real, abs)) return undefined;
  const stat = lstatOf(abs);
  let real: string | undefined;
  if (stat?.isSymbolicLink()) real = realpath(abs) ?? dangling(abs);
  else if (stat) real = path.includes('/') ? realpath(abs) : abs;
  else if (write && path.includes('/')) {
    const parent = realpath(dirname(abs));
    real = parent ? join(parent, basename(abs)) : undefined;
  }
  if (!real) return undefined;
  const expected = inside(view.workspace, abs) ? view.real + abs.slice(view.workspace.length) : abs;
  return real === expected || real === abs ? undefined : real;
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
 * The real places `path` leads to, as paths to judge: relative to the workspace when inside it,
 * absolute when not. Empty when nothing is a link.
 */
export function linkTargets(view: DiskView, path: string, write: boolean): string[] {
  const out: string[] = [];
  for (const folder of isAbsolute(path) ? [view.workspace] : view.folders) {
    const real = target(view, folder, path, write);
    if (!real) continue;
    out.push(inside(view.real, real) ? real.slice(view.real.length + 1) || '.' : real);
  }
  return out;
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

/** Whether a plain name (no `/`) is there in one of the folders it may be relative to. */
export function isFile(view: DiskView, name: string): boolean {
  if (name === '' || name.includes('/')) return false;
  return view.folders.some((folder) => lstatOf(join(folder, name)) !== undefined);
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
