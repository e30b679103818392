// Package managers and project runners: queries run without asking; installs, removals, publishing
// and running project scripts always ask (score 3), because they run code nobody has read.
import { firstPositional, type Judgement, judged, type Rule, usesOption } from './judgement.ts';

const INSTALL =
  /^(?:install|i|in|ins|inst|insta|instal|isnt|isnta|isntal|isntall|add|ci|clean-install|update|up|upgrade|udpate|uninstall|un|unlink|remove|rm|r|erase|purge|autoremove|dist-upgrade|full-upgrade|get|require|sync|link|ln|dedupe|ddp|prune|rebuild|rb|build-dep|reinstall|downgrade|patch|import)$/;
const RUN =
  /^(?:run|run-script|rum|urn|exec|x|dlx|test|t|tst|start|stop|restart|create|init|innit|generate|bench|build|check|clippy|env|shell|tool)$/;
const PUBLISH =
  /^(?:publish|unpublish|deprecate|dist-tag|owner|access|login|adduser|add-user|logout|token|team|org|hook|push|release|yank)$/;

interface ManagerSpec {
  /** Subcommands that only read. */
  reads: readonly string[];
  /** What the manager does with no subcommand. */
  bare?: 'reads' | 'installs';
  /** Short global options whose value is the next word. */
  takesValue?: string;
}

const why = (name: string, sub: string): string => {
  if (INSTALL.test(sub)) return `${name} ${sub} installs or removes packages`;
  if (RUN.test(sub)) return `${name} ${sub} runs project code the classifier cannot see`;
  if (PUBLISH.test(sub)) return `${name} ${sub} publishes or changes an account`;
  return `${name} ${sub} changes packages or runs code`;
};

export const manager =
  (spec: ManagerSpec): Rule =>
  (args, ctx) => {
    const sub = firstPositional(args, spec.takesValue ?? '');
    if (sub === undefined) {
      if (usesOption(args, { short: 'vVh', long: ['version', 'help'] }) || spec.bare !== 'installs') {
        return judged(0, `${ctx.name} prints its version or help`, { subcommand: null });
      }
      return judged(3, `${ctx.name} with no subcommand installs packages`, { subcommand: null });
    }
    if (spec.reads.includes(sub)) return judged(0, `${ctx.name} ${sub} only reads`, { subcommand: sub });
    return judged(3, why(ctx.name, sub), { subcommand: sub });
  };

// Not here though they read: help and fund open the `browser`/`viewer` an .npmrc names, doctor runs
// the `git` it names, and HOME (the workspace) or the project can hold that .npmrc.
const NPM_READS = [
  'ls',
  'list',
  'll',
  'la',
  'view',
  'v',
  'info',
  'show',
  'outdated',
  'search',
  'find',
  's',
  'root',
  'prefix',
  'explain',
  'why',
  'ping',
  'whoami',
  'query',
  'sbom',
];

export const PACKAGE_RULES: Record<string, Rule> = {
  npm: manager({ reads: NPM_READS, takesValue: 'wC' }),
  // These load code from the project on most commands (.pnpmfile.cjs, bunfig preloads, yarnPath
  // and plugins, .cargo/config runners, composer plugins), so only help and version are free.
  pnpm: manager({ reads: ['help'], bare: 'reads', takesValue: 'wC' }),
  yarn: () => judged(3, 'yarn runs the project’s own yarnPath and plugins', { subcommand: null }),
  bun: manager({ reads: ['help'], bare: 'reads' }),
  pip: manager({ reads: ['list', 'show', 'freeze', 'check', 'search', 'help', 'debug', 'index', 'inspect'] }),
  pip3: manager({
    reads: ['list', 'show', 'freeze', 'check', 'search', 'help', 'debug', 'index', 'inspect'],
  }),
  pipx: manager({ reads: ['list', 'environment', 'help'] }),
  uv: manager({ reads: ['version', 'help'] }),
  poetry: manager({ reads: ['about', 'help'] }),
  conda: manager({ reads: ['list', 'info', 'search', 'help'] }),
  gem: manager({
    reads: ['list', 'search', 'info', 'query', 'environment', 'which', 'contents', 'help', 'specification'],
  }),
  cargo: manager({ reads: ['version', 'help'] }),
  go: manager({ reads: ['version', 'help'] }),
  composer: manager({ reads: ['help'] }),
  brew: manager({
    reads: [
      'list',
      'ls',
      'info',
      'search',
      'outdated',
      'deps',
      'uses',
      'config',
      'doctor',
      'desc',
      'home',
      'leaves',
      'help',
    ],
  }),
  apt: manager({
    reads: ['list', 'show', 'search', 'policy', 'depends', 'rdepends', 'showpkg', 'changelog', 'help'],
  }),
  'apt-get': manager({ reads: ['check', 'changelog', 'help'] }),
  aptitude: manager({ reads: ['search', 'show', 'versions', 'why', 'help'] }),
  yum: manager({
    reads: ['list', 'info', 'search', 'provides', 'repolist', 'check-update', 'help', 'deplist'],
  }),
  dnf: manager({
    reads: ['list', 'info', 'search', 'provides', 'repolist', 'repoquery', 'check-update', 'help'],
  }),
  zypper: manager({ reads: ['search', 'se', 'info', 'if', 'list-updates', 'lu', 'repos', 'lr', 'help'] }),
  apk: manager({ reads: ['info', 'search', 'list', 'policy', 'stats', 'dot', 'help'] }),
  snap: manager({ reads: ['list', 'info', 'find', 'search', 'version', 'help', 'services'] }),
  flatpak: manager({ reads: ['list', 'info', 'search', 'remotes', 'history', 'help'] }),
  'apt-cache': () => judged(0, 'apt-cache only reads', { subcommand: null }),
  'dpkg-query': () => judged(0, 'dpkg-query only reads', { subcommand: null }),
  dpkg: (args) =>
    usesOption(args, {
      short: 'lLsSpcI',
      long: [
        'list',
        'listfiles',
        'status',
        'search',
        'print-avail',
        'print-architecture',
        'get-selections',
        'contents',
        'info',
        'version',
        'help',
        'compare-versions',
      ],
    })
      ? judged(0, 'dpkg only reads', { subcommand: null })
      : judged(3, 'dpkg installs or removes packages', { subcommand: null }),
  rpm: (args) =>
    /^-q/.test(args[0] ?? '') || args[0] === '--query'
      ? judged(0, 'rpm -q only reads', { subcommand: null })
      : judged(3, 'rpm installs or removes packages', { subcommand: null }),
  pacman: (args) =>
    /^-(?:Q[a-zA-Z]*|S[sigl]+)$/.test(args[0] ?? '')
      ? judged(0, 'pacman only queries', { subcommand: null })
      : judged(3, 'pacman installs or removes packages', { subcommand: null }),
};

/** Build tools and test runners run the project's own code: always asked. */
export const PROJECT_RUNNERS = [
  'make',
  'gmake',
  'cmake',
  'ninja',
  'meson',
  'just',
  'task',
  'mvn',
  'gradle',
  'ant',
  'sbt',
  'rake',
  'bundle',
  'pytest',
  'tox',
  'nox',
  'jest',
  'vitest',
  'mocha',
  'tsx',
  'ts-node',
  'nodemon',
  'pm2',
  'npx',
  'pnpx',
  'bunx',
  'uvx',
  'dotnet',
  'cargo-run',
];

export function projectRunner(name: string): Judgement {
  return judged(3, `${name} runs project code the classifier cannot see`, { subcommand: null });
}
