// git's own options before the subcommand, modelled exactly as git.c reads them (no clusters, no
// abbreviations; `--git-dir=X` or `--git-dir X`). Options that make git read configuration or a
// repository the classifier cannot vouch for ask at 3: -c with a key outside a small safe list,
// --config-env, --exec-path=DIR, --git-dir/--work-tree elsewhere, --bare, -p. Anything unknown
// asks at 3 too: git would refuse it, but a misread option could hide the subcommand.
import { type Judgement, judged } from './judgement.ts';

export interface GitGlobals {
  /** Index of the subcommand in args. */
  rest: number;
  /** Set when a global option prints something and git exits (--version, --exec-path). */
  prints?: string;
}

const FLAGS = new Set([
  '-P',
  '--no-pager',
  '--no-replace-objects',
  '--no-lazy-fetch',
  '--no-optional-locks',
  '--no-advice',
  '--literal-pathspecs',
  '--glob-pathspecs',
  '--noglob-pathspecs',
  '--icase-pathspecs',
]);
const PRINTS = new Set([
  '--version',
  '-v',
  '--help',
  '-h',
  '--exec-path',
  '--html-path',
  '--man-path',
  '--info-path',
]);
/** Options whose value is harmless, with `=` or as the next word. */
const HARMLESS_VALUE = new Set(['--namespace', '--attr-source', '--list-cmds']);

/** Keys `-c` may set: they change how output looks, never what runs. Lower-case. */
const SAFE_KEY =
  /^(?:color\.[a-z.]+|core\.quotepath|core\.abbrev|log\.(?:decorate|date|showroot|abbrevcommit|follow)|advice\.[a-z]+|user\.(?:name|email)|column\.ui|init\.defaultbranch|diff\.(?:renames|noprefix|mnemonicprefix|relative|context|interhunkcontext|algorithm|colormoved|colormovedws|wserrorhighlight|statgraphwidth|dirstat|submodule|orderfile|ignoresubmodules|indentheuristic|suppressblankempty)|status\.(?:short|branch|showuntrackedfiles|relativepaths|aheadbehind|renames)|i18n\.[a-z]+)$/;

/** Whether `-c key=value` (or `-c key`) only changes how output looks. */
export function isSafeConfig(assignment: string): boolean {
  const eq = assignment.indexOf('=');
  const key = (eq >= 0 ? assignment.slice(0, eq) : assignment).toLowerCase();
  if (key === 'safe.barerepository') return assignment.slice(eq + 1).toLowerCase() === 'explicit';
  return SAFE_KEY.test(key);
}

export function gitGlobals(args: readonly string[]): GitGlobals | Judgement {
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i] as string;
    if (!a.startsWith('-')) break;
    const [name = '', attached] = a.split(/=(.*)/s);
    if (FLAGS.has(a)) continue;
    if (PRINTS.has(a)) return { rest: i, prints: a };
    if (a === '-p' || a === '--paginate') return judged(3, `git ${a} runs a pager program`);
    if (a === '--bare') return judged(3, 'git --bare reads the configuration of whatever folder it is in');
    if (a === '-C') {
      i++;
      continue;
    }
    if (a === '-c') {
      const value = args[++i] ?? '';
      if (!isSafeConfig(value))
        return judged(3, `git -c ${value.split('=')[0]} sets configuration that can run programs`);
      continue;
    }
    const value = attached ?? args[i + 1] ?? '';
    if (
      attached === undefined &&
      (HARMLESS_VALUE.has(name) || name === '--git-dir' || name === '--work-tree')
    )
      i++;
    if (HARMLESS_VALUE.has(name)) continue;
    if (name === '--git-dir' && /^(?:\.\/)?\.git\/?$/.test(value)) continue;
    if (name === '--work-tree' && /^\.\/?$/.test(value)) continue;
    if (name === '--git-dir' || name === '--work-tree')
      return judged(
        3,
        `git ${name} ${value} reads a repository (and its configuration) the classifier cannot vouch for`,
      );
    if (
      name === '--exec-path' ||
      name === '--config-env' ||
      name === '--shallow-file' ||
      name === '--super-prefix'
    )
      return judged(3, `git ${name} can make git run programs`);
    return judged(3, `git ${name} is an option the classifier does not model`);
  }
  return { rest: i };
}
