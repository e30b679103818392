// An empty embedded database made once, at install, that a first run copies instead of running
// initdb. PGlite's initdb runs a second PostgreSQL inside the process next to the first: a first
// `steward chat` peaked at about 550 MiB and took about 3 s for it. Copying the template's files
// takes a fraction of a second and no memory; the first open is then like any later one.
import {
  chmodSync,
  cpSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { flushFolder, flushTree } from './flush.ts';

/** Written last into a finished template, with the PGlite version that made it. */
const MARKER = 'steward-template';
/** Bumped when steward makes its template differently, so an older one is not used. */
const FORMAT = 1;

/** PGlite's package folder and version (a template is only good for the PGlite that made it). */
function pgliteInstall(): { root: string; version: string } {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  const root = join(dirname(entry), '..');
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  return { root, version };
}

/**
 * Where this install keeps its template: node_modules/.cache/steward, beside PGlite itself, so
 * `npm ci` (which empties node_modules) drops a template made by another PGlite.
 */
export function defaultTemplatePath(): string {
  const { root, version } = pgliteInstall();
  return join(root, '..', '..', '.cache', 'steward', `pglite-${version}`);
}

/** What a finished template of this PGlite holds in its marker. */
const markerText = () => `${pgliteInstall().version} ${FORMAT}`;

function versionOf(template: string): string | undefined {
  try {
    return readFileSync(join(template, MARKER), 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * Copies a finished template of this PGlite to `dir`, which must not exist yet or be a plain empty
 * folder (never a link, a mount's contents or anything else: those are left to initdb). False when
 * there is none (the install skipped its scripts), so the caller runs initdb as before. The copy
 * goes to a folder beside `dir` and is renamed into place, so a copy cut off leaves no half
 * database behind; one a killed process left is removed first (the caller holds the lock). The
 * copy is on disk before it is renamed, so a power cut leaves it whole or absent too. It is the
 * owner's alone (folders 0700, files 0600), as PostgreSQL keeps its data folder.
 */
export function copyTemplate(template: string | undefined, dir: string): boolean {
  // A database already there (every open but the first) is answered before the template is read.
  const existing = lstatOrUndefined(dir);
  if (existing && !(existing.isDirectory() && readdirSync(dir).length === 0)) return false;
  if (!template || versionOf(template) !== markerText()) return false;
  const parent = dirname(dir);
  mkdirSync(parent, { recursive: true });
  for (const name of readdirSync(parent))
    if (name.startsWith(`${basename(dir)}.copying-`))
      rmSync(join(parent, name), { recursive: true, force: true });
  const copying = `${dir}.copying-${process.pid}`;
  try {
    cpSync(template, copying, { recursive: true, filter: (source) => basename(source) !== MARKER });
    setModes(copying, 0o700, 0o600);
    // On disk before the rename: PostgreSQL flushes what it writes, never what it finds there.
    flushTree(copying);
    if (existing) rmdirSync(dir);
    renameSync(copying, dir);
    flushFolder(parent);
  } finally {
    rmSync(copying, { recursive: true, force: true });
  }
  return true;
}

/** `path`'s own status (a link's, not its target's), or undefined when nothing is there. */
export function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function setModes(root: string, folders: number, files: number): void {
  chmodSync(root, folders);
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) setModes(path, folders, files);
    else if (entry.isFile()) chmodSync(path, files);
  }
}

/**
 * Makes the template at `template` unless a finished one of this PGlite is there. It is built in a
 * folder beside it and renamed into place, so a template is either whole or absent. It is readable
 * by every user (an empty database; the install may run as root and steward as another user).
 */
export async function makeTemplate(
  template: string,
  create: (dir: string) => Promise<{ close(): Promise<void> }>,
): Promise<'made' | 'present'> {
  if (versionOf(template) === markerText()) return 'present';
  const building = `${template}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  try {
    await (await create(building)).close();
    writeFileSync(join(building, MARKER), `${markerText()}\n`);
    setModes(building, 0o755, 0o644);
    // Every later first open copies it: on disk before it is renamed into place.
    flushTree(building);
    rmSync(template, { recursive: true, force: true });
    renameSync(building, template);
    flushFolder(dirname(template));
    return 'made';
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}
