// The policy guard's judgement of one path: hard denials that no grant or approval overrides.
// Pure and lexical; symlinks are resolved by the tools at execution time.

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

const CREDENTIAL_DIRS = new Set([
  '.ssh',
  '.aws',
  '.gnupg',
  '.kube',
  '.docker',
  '.azure',
  '.gcloud',
  '.password-store',
  '.terraform.d',
]);
const CREDENTIAL_FILES = new Set([
  '.netrc',
  '_netrc',
  '.pgpass',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.vault-token',
  '.terraformrc',
  '.my.cnf',
  '.htpasswd',
  'authorized_keys',
  'known_hosts',
]);
const KEY_FILE = /^id_(?:rsa|dsa|ecdsa|ed25519|xmss)(?:_sk)?(?!.*\.pub$)/;
const KEY_EXTENSION = /\.(?:pem|key|p12|pfx|jks|keystore|ppk)$/i;
const CREDENTIALS = /^\.?credentials(?:\..*)?$/i;

/** Names a glob is tested against: a glob that could match one of them is refused. */
const SAMPLES = [
  '.env',
  '.env.local',
  '.envrc',
  '.ssh',
  '.aws',
  '.gnupg',
  '.kube',
  '.docker',
  '.netrc',
  '.pgpass',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  'id_rsa',
  'id_dsa',
  'id_ecdsa',
  'id_ed25519',
  'server.pem',
  'server.key',
  'cert.p12',
  'cert.pfx',
  'credentials',
];

/** Why a file or folder name is secret, or undefined. */
export function secretName(name: string): string | undefined {
  // Every rule below needs a dot, or starts with one of these letters: most names skip them all.
  if (!name.includes('.') && !'_iCcak'.includes(name[0] ?? '')) return undefined;
  if (name.startsWith('.env')) return `${name} is an env file`;
  if (KEY_FILE.test(name)) return `${name} is an SSH private key`;
  if (KEY_EXTENSION.test(name)) return `${name} is key material`;
  if (CREDENTIAL_DIRS.has(name)) return `${name} is a credential folder`;
  if (CREDENTIAL_FILES.has(name) || CREDENTIALS.test(name)) return `${name} is a credentials file`;
  return undefined;
}

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
]);
const codeConfig = (parts: string[], i: number) =>
  CODE_CONFIG.has(parts[i] as string) ||
  (parts[i] === '.config' && ['git', 'lesskey', 'go'].includes(parts[i + 1] as string));

/** A bare word that names key material even without a slash or dot (`id_rsa`). */
export const isKeyFileName = (word: string): boolean => KEY_FILE.test(word);

const GLOBS = new Map<string, RegExp>();

/** Compiled globs, remembered (a few hundred at most) since the same ones recur. */
function globRegex(pattern: string): RegExp {
  let regex = GLOBS.get(pattern);
  if (!regex) {
    regex = compileGlob(pattern);
    if (GLOBS.size >= 256) GLOBS.clear();
    GLOBS.set(pattern, regex);
  }
  return regex;
}

function compileGlob(pattern: string): RegExp {
  let source = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*') source += '.*';
    else if (c === '?') source += '.';
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close < 0) source += '\\[';
      else {
        const body = pattern
          .slice(i + 1, close)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        source += `[${body}]`;
        i = close;
      }
    } else source += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return new RegExp(`${source}$`);
}

/** Which secret name a glob could match. Like the shell, a leading dot is never matched by a wildcard. */
function globMatchesSecret(pattern: string): string | undefined {
  if (/^[*?]+$/.test(pattern)) return undefined;
  let regex: RegExp;
  try {
    regex = globRegex(pattern);
  } catch {
    return pattern;
  }
  const dotted = pattern.startsWith('.');
  return SAMPLES.find((name) => (dotted || !name.startsWith('.')) && regex.test(name));
}

const isGlob = (text: string) => /[*?]|\[.*\]/.test(text);

export interface PathOptions {
  workspace: string;
  /**
   * The path is written (write_file, a redirect, a command that changes files): also refuse
   * configuration that makes later, harmless-looking commands run programs (.git, .gitconfig…).
   */
  forWrite?: boolean;
}

/**
 * Why the guard refuses `path`, or undefined. `path` is what the shell will pass on: quotes,
 * escapes and known variables already resolved; a glob is judged by what it could match.
 */
export function refusePath(path: string, opts: PathOptions): string | undefined {
  let p = path;
  if (/^file:\/\//i.test(p)) p = p.slice(7).replace(/^[^/]*/, '');
  else if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(p)) return undefined;
  if (p.startsWith('~')) return `${show(path)} is in a home folder (~)`;
  const parts = p.split('/');
  const glob = isGlob(p);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (part === '..') return `${show(path)} climbs out of the workspace with ..`;
    if (part === '' || part === '.') continue;
    const secret = glob && isGlob(part) ? globSecret(part) : secretName(part);
    if (secret) return part === path ? secret : `${show(path)}: ${secret}`;
    if (part === '.git' && (parts[i + 1] === 'hooks' || parts[i + 1] === 'config')) {
      return `${show(path)} is git metadata, which can make later git commands run code`;
    }
    if (opts.forWrite && codeConfig(parts, i)) {
      return `${show(path)} is configuration that can make later commands run programs`;
    }
  }
  if (p.startsWith('/')) return outside(path, p, glob, opts.workspace);
  return undefined;
}

function globSecret(part: string): string | undefined {
  const name = globMatchesSecret(part);
  return name ? `the pattern ${part} could match ${name}` : undefined;
}

function outside(path: string, p: string, glob: boolean, workspace: string): string | undefined {
  const normal = `/${p
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/')}`;
  const root = workspace.replace(/\/+$/, '');
  const literal = glob ? normal.slice(0, normal.search(/[*?[]/)) : normal;
  if (root !== '' && (normal === root || literal.startsWith(`${root}/`))) return undefined;
  if (!glob && (DEVICES.has(normal) || /^\/dev\/fd\/\d+$/.test(normal) || PROGRAM.test(normal))) {
    return undefined;
  }
  if (/^\/proc\/[^/]+\/environ$/.test(normal) || (glob && normal.startsWith('/proc/'))) {
    return `${show(path)} holds a process's environment`;
  }
  const top = normal.split('/')[1] ?? '';
  if (SYSTEM_DIRS.has(top)) return `${show(path)} is in the system directory /${top}`;
  if (top === 'home' || top === 'Users') return `${show(path)} is in a home folder`;
  return `${show(path)} is outside the workspace`;
}

const show = (path: string) => (path.length > 60 ? `${path.slice(0, 57)}…` : path);
