// The one shell dialect `shell` runs, stated once so the permission side judges exactly what executes.
// A classifier that models bash while /bin/sh (dash) runs the line is a parse differential: dash has no
// $'...' quoting, so `echo $'X\' ; rm -rf build ; echo \''` is one echo to bash and three commands to dash.
import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';

/**
 * How the command line is parsed and expanded when it starts: bash with no startup files and a fixed
 * option set, under an environment built here from an allowlist (so BASH_ENV, ENV, SHELLOPTS, BASHOPTS,
 * BASH_COMPAT, GLOBIGNORE, CDPATH, IFS, POSIXLY_CORRECT, BASH_FUNC_* and friends are never inherited).
 * The command itself may still change options with `set`/`shopt` for the lines after it: bash parses a
 * `-c` string one complete command at a time, so the permission side must treat those builtins as
 * changing the dialect.
 */
export const SHELL_DIALECT = {
  shell: 'bash',
  minVersion: [5, 2] as const,
  /** Invocation flags before the `-c`; no rc or profile file is read. */
  startupFlags: ['--noprofile', '--norc'] as const,
  /** `set -o` options and their fixed values. */
  setOptions: {
    braceexpand: true,
    histexpand: false, // `!` is an ordinary character
    keyword: false, // assignments count only before the command name
    noglob: false,
    posix: false,
    privileged: false,
    noclobber: false,
    errexit: false,
    nounset: false,
    pipefail: false,
    allexport: false,
  },
  /** `shopt` options and their fixed values. */
  shoptOptions: {
    extglob: false,
    globstar: false,
    nocaseglob: false,
    nocasematch: false,
    dotglob: false,
    nullglob: false,
    failglob: false,
    globskipdots: true, // `.*` never matches `.` or `..` (bash 5.2+)
    globasciiranges: true, // [a-z] is ASCII order, not the locale's collation
    extquote: true,
    interactive_comments: true, // `#` starts a comment
    expand_aliases: false,
    xpg_echo: false, // echo does not interpret backslashes
    patsub_replacement: true, // `&` in ${v/pat/rep} is the match (the 5.2 default)
    lastpipe: false,
    sourcepath: false, // `. name` does not search PATH
    cdable_vars: false,
  },
  /**
   * Variables the command sees, besides `extraEnv` the caller passes: PATH (absolute entries outside the
   * workspace only), HOME (the workspace), LANG and LC_* (a UTF-8 charset or C/POSIX, else C.UTF-8: a
   * multibyte charset such as Big5 or GBK can make a `\` byte part of a character), TZ, TERM=dumb.
   */
  envAllowlist: ['PATH', 'HOME', 'LANG', 'LC_*', 'TZ', 'TERM'] as const,
} as const;

/** Where bash is looked for, in order; never through PATH, which the operator or a workspace could shadow. */
export const BASH_CANDIDATES = ['/usr/bin/bash', '/bin/bash', '/usr/local/bin/bash'] as const;

export type BashStatus =
  | { kind: 'ok'; path: string; version: string }
  | { kind: 'missing'; reason: string }
  | { kind: 'too_old'; path: string; version: string; reason: string };

/** The argv after the bash path: the fixed dialect, then `-c command`. The command is one element. */
export function bashArgs(command: string): string[] {
  const args: string[] = [...SHELL_DIALECT.startupFlags];
  for (const [name, on] of Object.entries(SHELL_DIALECT.setOptions)) args.push(on ? '-o' : '+o', name);
  for (const [name, on] of Object.entries(SHELL_DIALECT.shoptOptions)) args.push(on ? '-O' : '+O', name);
  args.push('-c', command);
  return args;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Names bash or the dynamic loader act on: never passed, whoever asks. */
const FORBIDDEN_EXTRA =
  /^(BASH.*|ENV|SHELLOPTS|GLOBIGNORE|CDPATH|IFS|POSIXLY_CORRECT|PS4|EXECIGNORE|FIGNORE|HISTFILE|INPUTRC|TIMEFORMAT|PROMPT_COMMAND|LD_.*|PATH|HOME|LANG|LC_.*|TERM)$/;
const UTF8_OR_C = /^(C|POSIX|[A-Za-z0-9_@.-]*\.(utf-?8|UTF-?8)(@[A-Za-z0-9_]+)?)$/;
const FALLBACK_PATH = '/usr/local/bin:/usr/bin:/bin';
const FALLBACK_LANG = 'C.UTF-8';

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * PATH keeps only absolute directories outside the workspace: an empty, relative or workspace entry
 * would let a file the model wrote stand in for `ls` or `git`.
 */
export function safePath(raw: string | undefined, workspace: string): string {
  const kept = (raw ?? '').split(':').filter((dir) => isAbsolute(dir) && !inside(workspace, dir));
  return kept.length > 0 ? [...new Set(kept)].join(':') : FALLBACK_PATH;
}

/**
 * The environment of the command: an allowlist, never a denylist, so no STEWARD_* variable, token or
 * key leaks by a name nobody thought of. `extraEnv` (e.g. git-safety variables) may not name anything
 * bash or the loader act on; such a name is a programming error and throws.
 */
export function dialectEnv(
  base: Record<string, string | undefined>,
  workspace: string,
  extraEnv: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const env: Record<string, string> = { PATH: safePath(base.PATH, workspace), HOME: workspace };
  const lang = base.LANG;
  env.LANG = lang && UTF8_OR_C.test(lang) ? lang : FALLBACK_LANG;
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if (name.startsWith('LC_') && NAME.test(name) && UTF8_OR_C.test(value)) env[name] = value;
    if (name === 'TZ' && !value.includes('/..') && !value.startsWith('.')) env.TZ = value;
  }
  env.TERM = 'dumb';
  for (const [name, value] of Object.entries(extraEnv)) {
    if (!NAME.test(name) || FORBIDDEN_EXTRA.test(name)) {
      throw new Error(`shell: extraEnv may not set ${JSON.stringify(name)}`);
    }
    env[name] = value;
  }
  return env;
}

function run(file: string, args: string[]): Promise<string> {
  return new Promise((done, fail) => {
    execFile(file, args, { env: {}, timeout: 5_000 }, (error, stdout) =>
      error ? fail(error) : done(stdout),
    );
  });
}

/** Finds bash at a fixed absolute path and checks its version (through `findHostShell`). */
export async function resolveBash(candidates: readonly string[] = BASH_CANDIDATES): Promise<BashStatus> {
  for (const path of candidates) {
    try {
      await access(path, constants.X_OK);
    } catch {
      continue;
    }
    let version: string;
    try {
      version = (await run(path, ['--noprofile', '--norc', '-c', 'echo "$BASH_VERSION"'])).trim();
    } catch {
      continue;
    }
    const [major = 0, minor = 0] = version.split('.').map((n) => Number.parseInt(n, 10));
    const [needMajor, needMinor] = SHELL_DIALECT.minVersion;
    if (major > needMajor || (major === needMajor && minor >= needMinor))
      return { kind: 'ok', path, version };
    return {
      kind: 'too_old',
      path,
      version,
      reason: `shell needs bash ${needMajor}.${needMinor} or newer (for globskipdots); ${path} is ${version}: upgrade bash`,
    };
  }
  return {
    kind: 'missing',
    reason: `shell needs bash ${SHELL_DIALECT.minVersion.join('.')}+ at one of ${candidates.join(', ')}; install bash`,
  };
}
