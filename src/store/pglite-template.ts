// An empty embedded database made once, at install, that a first run copies instead of running
// initdb. PGlite's initdb runs a second PostgreSQL inside the process next to the first: a first
// `steward chat` peaked at about 550 MiB and took about 3 s for it. Copying the template's files
// takes a fraction of a second and no memory; the first open is then like any later one.
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Written last into a finished template, with the PGlite version that made it. */
const MARKER = 'steward-template';

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

function versionOf(template: string): string | undefined {
  try {
    return readFileSync(join(template, MARKER), 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * Copies a finished template of this PGlite to `dir`, which must not exist yet or be empty. False
 * when there is none (the install skipped its scripts), so the caller runs initdb as before. The
 * copy goes to a folder beside `dir` and is renamed into place: a copy cut off leaves no half
 * database behind.
 */
export function copyTemplate(template: string | undefined, dir: string): boolean {
  if (!template || versionOf(template) !== pgliteInstall().version) return false;
  if (existsSync(dir) && readdirSync(dir).length > 0) return false;
  const copying = `${dir}.copying-${process.pid}`;
  rmSync(copying, { recursive: true, force: true });
  try {
    cpSync(template, copying, { recursive: true, filter: (source) => basename(source) !== MARKER });
    rmSync(dir, { recursive: true, force: true });
    renameSync(copying, dir);
  } finally {
    rmSync(copying, { recursive: true, force: true });
  }
  return true;
}

/**
 * Makes the template at `template` unless a finished one of this PGlite is there. It is built in a
 * folder beside it and renamed into place, so a template is either whole or absent.
 */
export async function makeTemplate(
  template: string,
  create: (dir: string) => Promise<{ close(): Promise<void> }>,
): Promise<'made' | 'present'> {
  const { version } = pgliteInstall();
  if (versionOf(template) === version) return 'present';
  const building = `${template}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  try {
    await (await create(building)).close();
    writeFileSync(join(building, MARKER), `${version}\n`);
    rmSync(template, { recursive: true, force: true });
    renameSync(building, template);
    return 'made';
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}
