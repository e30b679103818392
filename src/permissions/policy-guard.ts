// Layer 1, the policy guard: hard denials, never overridable. It judges path-shaped tokens only (so
// `grep credentials notes.txt` runs), after the shell's own resolution: quotes, escapes, $IFS,
// brace expansion and variables assigned earlier in the same command; the parts of an argument
// after `=`, `@`, `ref:` and attached option letters too (guard-words.ts). It judges what the
// shell will open: globs are expanded against the real workspace and judged by what they could
// match, symlinks are followed to where they lead (disk-view.ts).
import { basename } from 'node:path';
import { changeFolder, diskView, globMatches } from './disk-view.ts';
import { hasGlob } from './glob-match.ts';
import { assign, type GuardContext, guardWord, refuseLinked, variants } from './guard-words.ts';
import { type Dialect, refusePath } from './path-rules.ts';
import { textWords } from './pattern-args.ts';
import { listedRead, READS_ALL, recursiveRead, refuseRecursive } from './recursive-reads.ts';
import { GLOB_MARK } from './shell-marks.ts';
import { commandView, isAssignment, type ParsedCommand, type Segment, unmark } from './shell-parse.ts';

const DUPLICATE = /^(?:\d+|-)$/;

export interface GuardOptions {
  /**
   * The shell that will run the command. 'bash' only when bash 5.2 with its default glob options
   * is guaranteed (globskipdots: a last `.*` never matches `.` or `..`); default 'any', the
   * strictest reading of every shell.
   */
  dialect?: Dialect;
  /** Look at the workspace on disk (symlinks, what globs match now). Default true. */
  disk?: boolean;
}

/** Wrappers whose next word is the program they run (`timeout 10 /usr/bin/python3 x`). */
const WRAPPERS = new Set([
  'env',
  'timeout',
  'nice',
  'nohup',
  'time',
  'stdbuf',
  'ionice',
  'command',
  'exec',
  'builtin',
  'xargs',
  'setsid',
  'chrt',
  'taskset',
  'sudo',
  'doas',
]);

/** How many leading words name the program run: wrappers, their options and values, the program. */
function programWords(argv: string[]): number {
  for (let k = 0; k < argv.length; k++) {
    const w = unmark(argv[k] as string);
    if (WRAPPERS.has(w)) continue;
    if (k > 0 && (w.startsWith('-') || isAssignment(w) || /^\d[\d.]*[smhd]?$/.test(w))) continue;
    return k + 1;
  }
  return argv.length;
}

/** `make()` on first call, remembered for the calls after (one command's judgement). */
function once<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}

/**
 * Why the guard refuses this shell command, or undefined. `writes[i]` says segment i may change
 * files (the classifier scored it above 0); its paths are then judged as written paths.
 */
export function guardCommand(
  parsed: ParsedCommand,
  workspace: string,
  writes: boolean[] = [],
  options: GuardOptions = {},
): string | undefined {
  const ctx: GuardContext = {
    workspace,
    vars: new Map(),
    dialect: options.dialect ?? 'any',
    disk: options.disk === false ? () => undefined : once(() => diskView(workspace)),
  };
  for (const [index, segment] of parsed.segments.entries()) {
    const before = segment.piped ? parsed.segments[index - 1] : undefined;
    const refused = guardSegment(segment, writes[index] === true, ctx, before);
    if (refused) return refused;
  }
  return undefined;
}

/** One segment's words and redirections; `ctx.vars` carries assignments on to later segments. */
function guardSegment(
  segment: Segment,
  write: boolean,
  ctx: GuardContext,
  before?: Segment,
): string | undefined {
  const { vars } = ctx;
  const view = commandView(segment);
  for (const assignment of view.assignments) {
    const refused = guardWord(assignment, ctx, false, write);
    if (refused) return refused;
    assign(vars, assignment);
  }
  if (view.keyword === 'for' || view.keyword === 'select') {
    const [name, marker, ...values] = view.argv;
    if (name && marker === 'in')
      vars.set(
        name,
        values.flatMap((v) => variants(v, vars)),
      );
  }
  const program = view.argv[0] ? unmark(view.argv[0]) : '';
  const args = view.argv.slice(1);
  const text = textWords(program, args);
  // The program itself (`/usr/bin/git`, also after `timeout 10`) is run, not written.
  const runs = write ? programWords(view.argv) : 0;
  const moving = program === 'cd' || program === 'pushd';
  for (let k = 0; k < view.argv.length; k++) {
    const word = view.argv[k] as string;
    // Text, unless the shell expands it into names first (`echo /home/*/.ssh/*` lists them).
    if (text.has(k - 1) && !word.includes(GLOB_MARK)) continue;
    const forced = moving && k > 0 && !word.startsWith('-');
    const refused = guardWord(word, ctx, forced, write && k >= runs, k < Math.max(runs, 1));
    if (refused) return refused;
  }
  const walked = recursiveReads(view.argv, ctx, before);
  if (walked) return walked;
  if (moving) {
    const refused = moved(program, args, ctx);
    if (refused) return refused;
  } else if (program === 'popd') {
    const disk = ctx.disk();
    if (disk) disk.lost = true;
  }
  if (program === 'read' || program === 'mapfile' || program === 'readarray') {
    for (const name of args) if (!name.startsWith('-')) vars.delete(name);
  }
  if (program === 'export' || program === 'local' || program === 'declare' || program === 'typeset') {
    for (const arg of args) if (isAssignment(arg)) assign(vars, arg);
  }
  for (const r of segment.redirects) {
    const duplicate = (r.op === '>&' || r.op === '<&') && DUPLICATE.test(r.target);
    if (r.heredoc || r.op === '<<<' || duplicate) continue;
    const refused = guardWord(r.target, ctx, true, r.op !== '<' && r.op !== '<&');
    if (refused) return refused;
  }
  return undefined;
}

const mayReadAll = (w: string) =>
  READS_ALL.has(w) || (w.includes('/') && READS_ALL.has(w.slice(w.lastIndexOf('/') + 1)));

/** `grep -r x .` and its kind read every file under their folders: what is there is judged. */
function recursiveReads(argv: string[], ctx: GuardContext, before?: Segment): string | undefined {
  // Without a workspace on disk there is nothing to walk: decided before reading the options.
  const disk = argv.some(mayReadAll) ? ctx.disk() : undefined;
  if (!disk) return undefined;
  const at = programWords(argv) - 1;
  const program = basename(unmark(argv[at] ?? ''));
  const args = argv.slice(at + 1).map(unmark);
  // `find . | xargs cat`: the files read are the ones the command before lists.
  const fed = before && argv.slice(0, at).some((w) => unmark(w) === 'xargs');
  const read = fed
    ? listedRead(program, commandView(before).argv.map(unmark))
    : recursiveRead(program, args, textWords(program, args));
  if (!read) return undefined;
  for (const root of read.roots) {
    if (root.includes('\u0001')) continue;
    const matches = hasGlob(root) ? globMatches(disk, root) : [root];
    if (!matches) return `${root} matches more than the guard can check before a recursive read`;
    for (const match of matches.length > 0 ? matches : [root]) {
      const refused = refuseRecursive(disk, match, read);
      if (refused) return refused;
    }
  }
  return undefined;
}

/** `cd`/`pushd`: never home, never into .git; later relative paths may be relative to the target. */
function moved(program: string, args: string[], ctx: GuardContext): string | undefined {
  const target = args.filter((a) => !a.startsWith('-'));
  if (target.length === 0 && !args.includes('-')) return `${program} with no folder goes to the home folder`;
  // Inside .git, plain relative names (`mv x config`) would rewrite git's own configuration.
  if (target.some((t) => unmark(t).toLowerCase().split('/').includes('.git')))
    return `${program} into .git is refused`;
  const disk = ctx.disk();
  if (disk) changeFolder(disk, target.length === 1 ? unmark(target[0] as string) : undefined);
  return undefined;
}

/** write_file's path: relative to the workspace; absolute only inside it; never .env or .git. */
export function guardWritePath(path: unknown, workspace: string): string | undefined {
  if (typeof path !== 'string' || path === '') return 'write_file needs a path';
  if (path.includes('\u0000')) return 'the path contains a NUL byte';
  return refusePath(path, { workspace, forWrite: true }) ?? refuseLinked(path, workspace, true);
}

const PATH_KEY = /(?:^|_)(?:path|paths|file|files|filename|dir|directory|folder|cwd)$/i;

/** Other tools: arguments whose name says they hold a path are judged as paths. */
export function guardToolArgs(args: Record<string, unknown>, workspace: string): string | undefined {
  for (const [key, value] of Object.entries(args)) {
    if (!PATH_KEY.test(key)) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item !== 'string') continue;
      const refused = refusePath(item, { workspace }) ?? refuseLinked(item, workspace, false);
      if (refused) return refused;
    }
  }
  return undefined;
}
