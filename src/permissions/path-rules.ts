// The policy guard's judgement of one path: hard denials that no grant or approval overrides.
// Pure and lexical; the guard resolves symlinks and globs against the disk first (policy-guard.ts).
import {
  couldMatchDots,
  type GlobPart,
  globParts,
  hasGlob,
  isGeneric,
  nameMatcher,
  startsWithDot,
} from './glob-match.ts';
import { SECRET_SAMPLES, secretName, secretPlace } from './secret-names.ts';
import { urlOf } from './url-shape.ts';

/** Absolute paths outside the workspace that are harmless to name. */
const DEVICES = new Set([
  '/dev/null',
  '/dev/zero',
  '/dev/random',
  '/dev/urandom',
  '/dev/stdin',
  '/dev/stdout',
  '/dev/stderr',
  '/dev/tty',
]);
/** A program by absolute path (`/usr/bin/git`): judged by the classifier as `git`. */
const PROGRAM = /^\/(?:usr\/(?:local\/)?)?s?bin\/[^/*?[]+$/;
const SYSTEM_DIRS = new Set([
  'etc',
  'proc',
  'sys',
  'dev',
  'boot',
  'root',
  'var',
  'usr',
  'bin',
  'sbin',
  'lib',
  'lib32',
  'lib64',
  'libx32',
  'opt',
  'srv',
  'run',
  'mnt',
  'media',
  'snap',
]);

/** Files and folders read by commands that run without asking, which can make them run programs. */
const CODE_CONFIG = new Set([
  '.git',
  '.gitconfig',
  '.gitmodules',
  '.curlrc',
  '.wgetrc',
  '.lesskey',
  '.lessfilter',
  '.cargo',
  '.yarnrc',
  '.yarnrc.yml',
  '.pnpmfile.cjs',
  'bunfig.toml',
  '.husky',
]);
/** Folders inside the workspace whose files later commands run by name (`npx x`, an active venv). */
const PROGRAM_DIRS: ReadonlyArray<readonly [string, string]> = [
  ['node_modules', '.bin'],
  ['.venv', 'bin'],
  ['venv', 'bin'],
];
const programDir = (parts: string[], i: number) =>
  PROGRAM_DIRS.some(([a, b]) => parts[i] === a && parts[i + 1] === b);

const codeConfig = (parts: string[], i: number) =>
  CODE_CONFIG.has(parts[i] as string) ||
  (parts[i] === '.config' && ['git', 'lesskey', 'go'].includes(parts[i + 1] as string));

/** The shell that runs the command: 'bash' (5.2, globskipdots on) only when that is guaranteed. */
export type Dialect = 'bash' | 'any';

export interface PathOptions {
  workspace: string;
  /**
   * The path is written (write_file, a redirect, a command that changes files): also refuse
   * configuration that makes later, harmless-looking commands run programs (.git, .gitconfig…),
   * and program folders (/usr/local/bin, node_modules/.bin).
   */
  forWrite?: boolean;
  /** Default 'any': a glob is judged as the strictest shell would expand it. */
  dialect?: Dialect;
  /** What this glob matches now was expanded and judged too, so a listing pattern may pass. */
  expanded?: boolean;
}

/**
 * Why the guard refuses `path`, or undefined. `path` is what the shell will pass on: quotes,
 * escapes and known variables already resolved; a glob is judged by what it could match.
 */
export function refusePath(path: string, opts: PathOptions): string | undefined {
  let p = path;
  const url = p.includes('://') ? urlOf(p) : undefined;
  if (url?.kind === 'web') return undefined;
  if (url?.kind === 'remote') return refuseRemote(path, url.path);
  if (url?.kind === 'file') p = url.path;
  if (p.startsWith('~')) return `${show(path)} is in a home folder (~)`;
  const parts = p.split('/');
  // Compared without case: on a case-insensitive filesystem `.GIT/config` is `.git/config`.
  const lower = opts.forWrite || p.includes('.g') || p.includes('.G') ? p.toLowerCase().split('/') : parts;
  const glob = hasGlob(p);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (part === '..') return `${show(path)} climbs out of the workspace with ..`;
    if (part === '' || part === '.') continue;
    const secret =
      glob && hasGlob(part)
        ? globRefusal(part, isLast(parts, i), opts)
        : (secretName(part) ?? (i > 0 ? secretPlace(parts[i - 1] as string, part) : undefined));
    if (secret) return part === path ? secret : `${show(path)}: ${secret}`;
    if (lower[i] === '.git' && (lower[i + 1] === 'hooks' || lower[i + 1] === 'config')) {
      return `${show(path)} is git metadata, which can make later git commands run code`;
    }
    if (opts.forWrite && codeConfig(lower, i)) {
      return `${show(path)} is configuration that can make later commands run programs`;
    }
    if (opts.forWrite && programDir(lower, i)) {
      return `${show(path)} is a program folder: later commands would run what is written there`;
    }
  }
  if (p.startsWith('/')) return outside(path, p, glob, opts);
  return undefined;
}

const isLast = (parts: string[], i: number) => parts.slice(i + 1).every((x) => x === '');

/** The path of a URL to another host (ssh://, s3://…): only `..` and secret names are refused. */
function refuseRemote(path: string, remote: string): string | undefined {
  for (const part of remote.split('/')) {
    if (part === '..') return `${show(path)} climbs with ..`;
    const secret = part === '' ? undefined : hasGlob(part) ? undefined : secretName(part);
    if (secret) return `${show(path)}: ${secret}`;
  }
  return undefined;
}

/**
 * A glob segment is refused if it could match `.` or `..` in any shell (unless bash 5.2 runs it and
 * it is the last segment: globskipdots), or a secret name whatever exists now, unless it names
 * nothing in particular (`.[!.]*`) and what it matches now was judged.
 */
function globRefusal(part: string, last: boolean, opts: PathOptions): string | undefined {
  // Read as bash and as dash read it; the stricter answer counts.
  const bash = globParts(part);
  const readings = part.includes('[') ? [bash, globParts(part, true)] : [bash];
  if (readings.some(couldMatchDots) && !(last && opts.dialect === 'bash')) {
    return `the pattern ${part} could match .. (the folder above) in some shells`;
  }
  for (const parts of readings) {
    const refused = secretAim(part, parts, opts);
    if (refused) return refused;
  }
  return undefined;
}

function secretAim(part: string, parts: GlobPart[], opts: PathOptions): string | undefined {
  const dotted = startsWithDot(parts);
  const generic = isGeneric(parts);
  if (generic && (opts.expanded === true || !dotted)) return undefined;
  // The samples are lower case: matched without case, the pattern is folded, not each name.
  const matches = nameMatcher(parts, true, true);
  const name = SECRET_SAMPLES.find(matches);
  if (!name) return undefined;
  // `*.json` lists JSON files (package.json among them); `*.pem` and `id_*` aim at keys.
  const listing = generic || (!dotted && ORDINARY_NAMES.some(nameMatcher(parts, true)));
  if (listing && (opts.expanded === true || !dotted)) return undefined;
  return `the pattern ${part} could match ${name}`;
}

/** Common files that hold no secret: a pattern matching one of them is a listing, not an aim. */
const ORDINARY_NAMES = [
  'package.json',
  'settings.json',
  'tsconfig.json',
  'config.yaml',
  'docker-compose.yml',
  'config.toml',
  'README.md',
  'index.ts',
  'main.py',
  'notes.txt',
  'data.csv',
  'Makefile',
  'app.log',
];

function outside(path: string, p: string, glob: boolean, opts: PathOptions): string | undefined {
  const normal = `/${p
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/')}`;
  const root = opts.workspace.replace(/\/+$/, '');
  const literal = glob ? normal.slice(0, normal.search(/[*?[]/)) : normal;
  if (root !== '' && (normal === root || literal.startsWith(`${root}/`))) return undefined;
  if (!glob && (DEVICES.has(normal) || /^\/dev\/fd\/\d+$/.test(normal))) return undefined;
  if (!glob && PROGRAM.test(normal)) {
    if (!opts.forWrite) return undefined;
    return `${show(path)} is in a program folder: writing there changes what commands run`;
  }
  if (opts.forWrite && PROGRAM_FOLDER.test(normal)) {
    return `${show(path)} is in a program folder: writing there changes what commands run`;
  }
  if (/^\/proc\/[^/]+\/environ$/.test(normal) || (glob && normal.startsWith('/proc/'))) {
    return `${show(path)} holds a process's environment`;
  }
  const top = normal.split('/')[1] ?? '';
  if (SYSTEM_DIRS.has(top)) return `${show(path)} is in the system directory /${top}`;
  if (top === 'home' || top === 'Users') return `${show(path)} is in a home folder`;
  return `${show(path)} is outside the workspace`;
}

/** Where programs are found by name: writing there is refused, never asked. */
const PROGRAM_FOLDER =
  /^\/(?:usr\/(?:local\/)?)?s?bin(?:\/|$)|^\/opt\/[^/]+\/s?bin(?:\/|$)|^\/snap\/bin(?:\/|$)|^\/usr\/(?:local\/)?(?:games|libexec)(?:\/|$)|^\/(?:home\/[^/]+|root)\/\.local\/bin(?:\/|$)/;

const show = (path: string) => (path.length > 60 ? `${path.slice(0, 57)}…` : path);
