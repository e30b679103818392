// Git runs programs named in its configuration (core.fsmonitor on `git status`, diff.external and
// textconv drivers on `git diff`, hooks, pagers…). A file planted with the exempt write_file (a
// folder git takes for a bare repository, a nested .git) would otherwise make "read-only" git
// commands run code. Two halves, both pure:
// - `gitSafetyEnv` / `gitSafetyArgs`: configuration the shell tool applies to every command, which
//   outranks repository config: bare repositories only when named explicitly, no fsmonitor, no hooks…
// - `isGitControlPath`: the files that configure git; writing them is never a plain write.

/** Command-line-scope configuration that neutralises executing keys (first wins on duplicates). */
export const GIT_SAFETY_CONFIG: ReadonlyArray<readonly [string, string]> = [
  // A folder with HEAD, objects/ and config is no longer a repository unless named with --git-dir.
  ['safe.bareRepository', 'explicit'],
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  // HOME is the workspace, so ~/.ssh/config (ProxyCommand) could be planted.
  ['core.sshCommand', 'ssh -F /dev/null'],
  ['core.editor', 'false'],
  ['sequence.editor', 'false'],
  // An empty value empties the helper list.
  ['credential.helper', ''],
  ['gpg.program', 'gpg'],
  ['gpg.ssh.program', 'ssh-keygen'],
  ['gpg.x509.program', 'gpgsm'],
  ['protocol.ext.allow', 'never'],
  ['log.showSignature', 'false'],
];

/**
 * Environment the shell tool sets besides the configuration. HOME is the workspace, so the
 * "global" ~/.gitconfig and ~/.config/git/config would be files anyone can plant there: the global
 * configuration is /dev/null unless the caller names a file of its own (outside the workspace).
 */
const GIT_SAFETY_VARIABLES: Readonly<Record<string, string>> = {
  GIT_NO_REPLACE_OBJECTS: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

/**
 * The environment entries to add to the shell tool's environment: GIT_CONFIG_COUNT/KEY_n/VALUE_n
 * after any entries `existing` already has (so they are kept, and ours come later and win), plus
 * GIT_NO_REPLACE_OBJECTS, GIT_TERMINAL_PROMPT, GIT_PAGER and GIT_CONFIG_GLOBAL (`globalConfig`,
 * default /dev/null).
 */
export function gitSafetyEnv(
  existing: Readonly<Record<string, string | undefined>> = {},
  globalConfig = '/dev/null',
): Record<string, string> {
  const count = Number.parseInt(existing.GIT_CONFIG_COUNT ?? '0', 10);
  const start = Number.isSafeInteger(count) && count > 0 ? count : 0;
  const env: Record<string, string> = { ...GIT_SAFETY_VARIABLES, GIT_CONFIG_GLOBAL: globalConfig };
  GIT_SAFETY_CONFIG.forEach(([key, value], k) => {
    env[`GIT_CONFIG_KEY_${start + k}`] = key;
    env[`GIT_CONFIG_VALUE_${start + k}`] = value;
  });
  env.GIT_CONFIG_COUNT = String(start + GIT_SAFETY_CONFIG.length);
  return env;
}

/** The same configuration as `-c key=value` arguments, for code that runs git itself. */
export const gitSafetyArgs = (): string[] => GIT_SAFETY_CONFIG.flatMap(([k, v]) => ['-c', `${k}=${v}`]);

/** Whether some component of `path` starts with a dot, or it holds `~` (git~1, the 8.3 alias of .git). */
export const mayNameDotfile = (path: string): boolean =>
  path.startsWith('.') || path.includes('/.') || path.includes('\\.') || path.includes('~');

const CONTROL_FILES = new Set([
  '.gitattributes',
  '.gitmodules',
  '.gitconfig',
  '.git-credentials',
  '.gitignore_global',
]);

/**
 * Whether writing `path` can change what git runs: anything under or named `.git` (a folder, or a
 * gitfile pointing elsewhere), .gitattributes, .gitmodules, .gitconfig, and ~/.config/git/*.
 */
export function isGitControlPath(path: string): boolean {
  if (!mayNameDotfile(path)) return false;
  const parts = path.toLowerCase().split(/[/\\]+/);
  for (let k = 0; k < parts.length; k++) {
    // Windows-style and NTFS-style aliases (.git., .git::$INDEX_ALLOCATION) would still be .git.
    const part = (parts[k] as string).replace(/[. ]+$|::.*$/, '');
    if (part === '.git' || part === 'git~1' || CONTROL_FILES.has(part)) return true;
    if (part === '.config' && parts[k + 1] === 'git') return true;
  }
  return false;
}
