// git: read-only subcommands run without asking; options that run programs or write files, and
// every form of push, do not. An unknown subcommand may be an alias, which can run anything.
// Read-only here assumes the shell tool applies gitSafetyEnv (git-safety.ts): with it, a planted
// bare repository is ignored and fsmonitor, hooks and pagers cannot run from repository config.
import { type GitGlobals, gitGlobals } from './git-globals.ts';
import { firstPositional, type Judgement, judged, positionals, type Score, usesOption } from './judgement.ts';

/** Options of otherwise read-only subcommands that run programs or write files. */
const READ_DANGER = {
  long: [
    'output',
    'ext-diff',
    'textconv',
    'filters',
    'open-files-in-pager',
    'upload-pack',
    'exec',
    'receive-pack',
  ],
  safe: ['text', 'no-ext-diff', 'no-textconv'],
};

const READ_ONLY = new Set([
  'status',
  'log',
  'diff',
  'show',
  'rev-parse',
  'ls-files',
  'ls-tree',
  'blame',
  'annotate',
  'shortlog',
  'describe',
  'rev-list',
  'merge-base',
  'name-rev',
  'whatchanged',
  'count-objects',
  'cat-file',
  'show-ref',
  'for-each-ref',
  'show-branch',
  'grep',
  'version',
  'var',
  'check-ignore',
  'check-attr',
  'check-ref-format',
  'cherry',
  'range-diff',
  'diff-tree',
  'diff-files',
  'diff-index',
  'verify-commit',
  'verify-tag',
  'fsck',
]);

type Sub = (args: string[]) => [Score, string];

const SUBCOMMANDS: Record<string, Sub> = {
  push: () => [3, 'publishes commits'],
  clean: (a) =>
    usesOption(a, { short: 'n', long: ['dry-run'] })
      ? [0, 'lists what it would delete']
      : [3, 'deletes untracked files'],
  reset: (a) =>
    usesOption(a, { long: ['hard', 'merge', 'keep'] })
      ? [3, 'discards changes']
      : [2, 'moves the branch and index'],
  rm: (a) => (usesOption(a, { long: ['cached'] }) ? [2, 'untracks files'] : [3, 'deletes files']),
  checkout: (a) =>
    usesOption(a, { short: 'fp', long: ['force', 'patch'] }) || a.includes('--') || a.includes('.')
      ? [3, 'overwrites working files']
      : [1, 'switches branches'],
  restore: (a) =>
    usesOption(a, { short: 'W', long: ['worktree'] }) || !usesOption(a, { short: 'S', long: ['staged'] })
      ? [3, 'overwrites working files']
      : [2, 'unstages files'],
  switch: (a) =>
    usesOption(a, { short: 'fC', long: ['discard-changes', 'force', 'force-create'] })
      ? [3, 'discards changes']
      : [1, 'switches branches'],
  branch: branchRule,
  tag: (a) => {
    if (usesOption(a, { short: 'd', long: ['delete'] })) return [3, 'deletes a tag'];
    if (usesOption(a, { short: 'f', long: ['force'] })) return [2, 'moves a tag'];
    if (usesOption(a, { short: 'lv', long: ['list', 'verify'] }) || positionals(a, 'n').length === 0) {
      return [0, 'lists tags'];
    }
    return [1, 'creates a tag'];
  },
  stash: (a) => {
    const verb = firstPositional(a) ?? 'push';
    if (verb === 'list' || verb === 'show') return [0, `stash ${verb} only reads`];
    if (verb === 'drop' || verb === 'clear') return [3, 'discards stashed changes'];
    return [2, `stash ${verb} changes working files`];
  },
  remote: (a) => {
    const verb = firstPositional(a);
    if (verb === undefined || verb === 'get-url') return [0, 'lists remotes'];
    if (verb === 'show') return [1, 'asks the remote'];
    return [2, `remote ${verb} changes remotes`];
  },
  config: (a) => {
    const verb = firstPositional(a);
    const reads =
      usesOption(a, { short: 'l', long: ['get', 'get-all', 'get-regexp', 'get-urlmatch', 'list'] }) ||
      verb === 'get' ||
      verb === 'list' ||
      (positionals(a, 'f').length === 1 && !usesOption(a, { long: ['unset', 'unset-all', 'add', 'edit'] }));
    return reads ? [0, 'reads configuration'] : [3, 'changes configuration, which can make git run programs'];
  },
  reflog: (a) =>
    ['expire', 'delete'].includes(firstPositional(a) ?? '')
      ? [3, 'deletes reflog entries']
      : [0, 'reads the reflog'],
  worktree: (a) => {
    const verb = firstPositional(a);
    if (verb === 'list') return [0, 'lists worktrees'];
    if (verb === 'remove' || verb === 'prune') return [3, 'deletes worktrees'];
    return [2, 'changes worktrees'];
  },
  notes: (a) =>
    ['list', 'show', undefined].includes(firstPositional(a)) ? [0, 'reads notes'] : [2, 'changes notes'],
  submodule: (a) =>
    ['status', 'summary', undefined].includes(firstPositional(a))
      ? [0, 'reads submodules']
      : [3, 'changes submodules, which can run commands'],
  rebase: (a) =>
    usesOption(a, { short: 'x', long: ['exec'] })
      ? [3, 'runs commands while rebasing']
      : [2, 'rewrites commits'],
  help: (a) =>
    usesOption(a, { short: 'wim', long: ['web', 'info', 'man'] })
      ? [3, 'opens a viewer program']
      : [0, 'prints help'],
  archive: (a) => {
    if (usesOption(a, { short: 'o', long: ['output'] })) return [3, 'overwrites a file'];
    if (usesOption(a, { long: ['remote', 'exec'] })) return [3, 'runs a remote program'];
    return [0, 'writes an archive to stdout'];
  },
  'ls-remote': (a) =>
    usesOption(a, { long: ['upload-pack'] }) || a.some((x) => /^-u./.test(x) || x === '-u')
      ? [3, 'runs a program on the remote side']
      : [1, 'asks the remote'],
  fetch: (a) =>
    usesOption(a, { long: ['upload-pack'] })
      ? [3, 'runs a program on the remote side']
      : [1, 'downloads from the remote'],
  add: () => [1, 'stages files'],
  init: (a) =>
    usesOption(a, { long: ['template'] }) ? [3, 'copies hooks from a template'] : [1, 'creates a repository'],
  mv: () => [2, 'moves files'],
  commit: () => [2, 'records a commit'],
  merge: () => [2, 'merges branches'],
  'cherry-pick': () => [2, 'applies commits'],
  revert: () => [2, 'reverts commits'],
  am: () => [2, 'applies patches'],
  apply: () => [2, 'changes files from a patch'],
  pull: () => [2, 'downloads and merges'],
  clone: (a) =>
    usesOption(a, { short: 'uc', long: ['upload-pack', 'template', 'config', 'separate-git-dir'] })
      ? [3, 'clone options that run programs']
      : a.some(isCommandTransport)
        ? [3, 'clones through a transport that runs a command']
        : [2, 'downloads a repository'],
  bisect: (a) =>
    firstPositional(a) === 'run' ? [3, 'bisect run runs a command at every step'] : [2, 'checks out commits'],
  'format-patch': () => [1, 'writes patch files'],
  'request-pull': () => [1, 'summarises changes'],
  bundle: () => [2, 'writes bundles'],
  'update-index': () => [2, 'changes the index'],
  repack: () => [2, 'repacks objects'],
  lfs: (a) => (firstPositional(a) === 'push' ? [3, 'publishes LFS objects'] : [2, 'manages LFS objects']),
};

const DESTRUCTIVE: Record<string, string> = {
  gc: 'deletes unreachable objects',
  prune: 'deletes unreachable objects',
  'filter-branch': 'rewrites history',
  'filter-repo': 'rewrites history',
  'update-ref': 'rewrites references',
  replace: 'replaces objects',
  'send-email': 'sends mail',
  difftool: 'runs external diff programs',
  mergetool: 'runs external merge programs',
  daemon: 'serves the repository',
  instaweb: 'runs a web server',
  'http-backend': 'serves the repository',
  shell: 'runs a restricted shell',
  credential: 'reveals stored credentials',
  'credential-store': 'reveals stored credentials',
  'credential-cache': 'reveals stored credentials',
};

function branchRule(a: string[]): [Score, string] {
  if (
    usesOption(a, { short: 'D', long: ['delete'] }) ||
    (usesOption(a, { short: 'd' }) && !a.includes('--list'))
  ) {
    return [3, 'deletes a branch'];
  }
  if (usesOption(a, { short: 'mMcCf', long: ['move', 'copy', 'force'] }))
    return [2, 'moves or overwrites a branch'];
  if (usesOption(a, { short: 'u', long: ['set-upstream-to', 'unset-upstream', 'edit-description'] })) {
    return [1, 'changes branch settings'];
  }
  const listing = usesOption(a, {
    short: 'larv',
    long: ['list', 'all', 'remotes', 'contains', 'merged', 'no-merged'],
  });
  if (!listing && positionals(a).length > 0) return [1, 'creates a branch'];
  return [0, 'lists branches'];
}

const SECOND_LEVEL = new Set([
  'stash',
  'remote',
  'worktree',
  'notes',
  'submodule',
  'reflog',
  'lfs',
  'config',
]);

export function gitRule(args: string[]): Judgement {
  const globals: GitGlobals | Judgement = gitGlobals(args);
  if ('score' in globals) return { ...globals, ...git() };
  const { rest: i } = globals;
  if (globals.prints) return judged(0, `git ${globals.prints} prints and exits`, git());
  const sub = args[i];
  if (sub === undefined) return judged(0, 'git with no subcommand prints help', git());
  const rest = args.slice(i + 1);
  const scope = SECOND_LEVEL.has(sub) ? [sub, firstPositional(rest)].filter(Boolean).join(' ') : sub;
  const danger = usesOption(rest, READ_DANGER);
  if (danger)
    return judged(3, `git ${sub} ${danger.split('=')[0]} runs a program or writes a file`, git(scope));
  if (rest.some(isCommandTransport))
    return judged(3, `git ${sub} reaches a remote through a transport that runs a command`, git(scope));
  if (READ_ONLY.has(sub)) {
    if (sub === 'grep' && usesOption(rest, { short: 'O' }))
      return judged(3, 'git grep -O runs a pager program', git(sub));
    return judged(0, `git ${sub} only reads`, git(sub));
  }
  const reach = networkOf(sub, rest);
  const rule = Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub] : undefined;
  if (rule) {
    const [score, what] = rule(rest);
    return judged(score, `git ${sub}: ${what}`, { ...git(scope), ...reach });
  }
  const destructive = Object.hasOwn(DESTRUCTIVE, sub) ? DESTRUCTIVE[sub] : undefined;
  if (destructive) return judged(3, `git ${sub} ${destructive}`, git(sub));
  return judged(3, `git ${sub} is not a known git command; it may be an alias that runs anything`, git(sub));
}

/** ext:: and fd:: URLs run a command to reach the "remote". */
const isCommandTransport = (a: string) =>
  /^(?:ext|fd)::/i.test(a) || /^--upload-pack|^--receive-pack/.test(a);

const NETWORK = new Set(['clone', 'fetch', 'pull', 'push', 'ls-remote']);

/** Where a network subcommand goes: URL hosts, or remote names whose URL the config holds. */
function networkOf(sub: string, rest: string[]): Partial<Judgement> {
  const remoteVerb = sub === 'remote' ? firstPositional(rest) : undefined;
  if (!NETWORK.has(sub) && remoteVerb !== 'show' && remoteVerb !== 'update') return {};
  const operands = positionals(rest, 'bojuc').filter((p) => p !== remoteVerb);
  const hosts: string[] = [];
  const remotes: string[] = [];
  // The first operand is the URL or remote; later ones are refspecs or the clone's folder.
  const first = operands[0];
  if (first !== undefined) {
    const host = gitHost(first);
    if (host === null) return { network: null };
    if (host !== undefined) hosts.push(host);
    else if (sub === 'clone') return {};
    else remotes.push(first);
  }
  return { network: { hosts, remotes } };
}

/** The host of a git URL (https://, ssh://, git@host:path); undefined for a remote name or path, null if unreadable. */
export function gitHost(url: string): string | undefined | null {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    try {
      const host = new URL(url).hostname.toLowerCase();
      return host === '' ? (url.startsWith('file:') ? undefined : null) : host;
    } catch {
      return null;
    }
  }
  const scp = /^(?:[^@/:]+@)?([^/:]+):/.exec(url);
  if (scp) return (scp[1] as string).toLowerCase();
  return undefined;
}

const git = (subcommand?: string): Partial<Judgement> => ({ program: 'git', subcommand: subcommand ?? null });
