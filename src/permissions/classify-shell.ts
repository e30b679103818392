// Layer 3, the danger classifier for `shell`: every segment scored, the worst wins.
// 0 read-only (runs without asking) · 1–2 asks unless a grant covers it · 3 always asks.
import { expandedName, GLOB_SAFE, globAsOption, writesControlFile } from './argument-risks.ts';
import { assignmentScore } from './assignments.ts';
import { isHomeConfigPath } from './home-config.ts';
import { isQuietTarget, type Judgement, judged, type RuleContext, type Score, worse } from './judgement.ts';
import { ruleFor, unknownRule } from './rules-programs.ts';
import { ANSI_MARK, BRACE_MARK, GLOB_MARK, type HereDoc, VAR_CLOSE, VAR_OPEN } from './shell-marks.ts';
import {
  commandView,
  display,
  expansions,
  hasExpansion,
  type ParsedCommand,
  type Segment,
  unmark,
} from './shell-parse.ts';
import { localNames, type Names, nameOf, pathSafeOutput, SUBSTITUTED } from './shell-values.ts';
import { WRAPPERS } from './wrappers.ts';

export interface Classification {
  score: Score;
  reason: string;
  /** One judgement per segment, in order. */
  segments: Judgement[];
}

/** A program named by absolute path in a system bin folder is judged by its name. */
const PROGRAM_PATH = /^\/(?:usr\/(?:local\/)?)?s?bin\/([^/]+)$/;
/** Builtins that take variable names; bash evaluates a subscript in a name (a[$(cmd)]). */
const NAME_TAKERS = new Set(
  'read unset printf mapfile readarray getopts wait test [ [[ declare typeset local export readonly let'.split(
    ' ',
  ),
);
/** Variables in these commands' arguments change nothing they open or run. */
const VARIABLES_OK = new Set([
  'echo',
  'printf',
  'test',
  '[',
  '[[',
  ':',
  'true',
  'false',
  'exit',
  'return',
  'shift',
  'set',
  'export',
  'local',
  'declare',
  'typeset',
  'readonly',
  'unset',
  'let',
  'read',
  'wait',
  'sleep',
  'seq',
  'expr',
]);

/** The scan's phrases for a substitution whose text is handed over whole (in `scan.inner`). */
const SUBSTITUTIONS = new Set(['command substitution $(…)', 'command substitution `…`']);

export function classify(parsed: ParsedCommand): Classification {
  const { opaque } = parsed.scan;
  // A substitution is seen through when it is the only opaque thing and every substitution's
  // text is itself read-only (score 0); its output then counts as an unknown value, unless every
  // substitution prints only something path-safe ($(date +%F), $(pwd)).
  const visible =
    opaque.length > 0 && opaque.every((o) => SUBSTITUTIONS.has(o))
      ? parsed.segments.filter((s) => s.substitution !== undefined)
      : undefined;
  const substitutionsSafe = visible?.every(pathSafeOutput) ?? false;
  const names = localNames(parsed, substitutionsSafe);
  const { local } = names;
  if (substitutionsSafe) local.add(SUBSTITUTED);
  const segments = parsed.segments.map((s) => classifySegment(s, names));
  let top = segments.reduce<Judgement>((a, b) => worse(a, b), segments[0] ?? judged(0, 'nothing runs'));
  const readOnlyInside =
    visible !== undefined &&
    segments.every((j, k) => parsed.segments[k]?.substitution === undefined || j.score === 0);
  if (opaque.length > 0 && !readOnlyInside) {
    top = judged(3, `opaque command (${opaque.join(', ')}): the classifier cannot see what runs`);
  } else if (top.score === 0) {
    const programs = [...new Set(segments.map((s) => s.program).filter((p): p is string => Boolean(p)))];
    if (programs.length > 1 || (programs.length === 1 && segments.length > 1)) {
      top = judged(0, `read-only: ${programs.join(', ')}`);
    }
  }
  return { score: top.score, reason: top.reason, segments };
}

function classifySegment(segment: Segment, names: Names): Judgement {
  const { local, tainted, content } = names;
  const view = commandView(segment);
  let result = judged(0, view.assignments.length > 0 ? 'only sets variables' : 'nothing runs');
  for (const a of view.assignments) result = worse(result, assignmentScore(nameOf(a)));
  if (segment.defines) return judged(3, 'opaque command (defines a function)');
  if (view.keyword === 'case') return judged(3, 'opaque command (case statement)');
  if (view.keyword === 'function') return judged(3, 'opaque command (defines a function)');
  if (view.keyword === 'coproc') return judged(3, 'opaque command (coproc)');
  if (view.keyword) return worse(result, judged(0, `${view.keyword} loop header`));
  let command: Judgement | undefined;
  if (view.argv.length > 0) {
    const heredoc = segment.redirects.find((r) => r.heredoc)?.heredoc;
    command = judgeArgv(view.argv, { piped: segment.piped, heredoc, local, tainted, content }, 0);
    result = view.assignments.length > 0 ? worse(command, result) : command;
  }
  if (command && command.score > 0 && command.score < 3 && command.program) {
    const control = writesControlFile(command.program, command.subcommand, view.argv.slice(1));
    if (control) result = worse(result, control);
  }
  for (const r of segment.redirects) {
    result = worse(result, redirectJudgement(r.op, r.target));
    // A target named by a value the classifier cannot see opens a file the guard cannot judge.
    const unseen = hasExpansion(r.target)
      ? expansions(r.target).find((v) => !local.has(v) || content.has(v))
      : undefined;
    if (unseen !== undefined && result.score === 0)
      result = judged(1, `a redirect opens ${display(r.target)}, whose name the classifier cannot see`);
  }
  // Only the program's own judgement can be granted: a score raised by a redirect or an assignment
  // (`echo x >> f`, `FOO=1 ls`) names no program, so no grant covers it.
  if (command && result !== command && result.score > command.score)
    return { score: result.score, reason: result.reason };
  return result;
}

function redirectJudgement(op: string, rawTarget: string): Judgement {
  const target = unmark(rawTarget);
  if (isQuietTarget(target) || op === '<' || op === '<&' || op === '<<' || op === '<<<' || op === '<<-') {
    return judged(0, op.startsWith('<') ? 'reads input' : 'discards output');
  }
  if (op === '>&' && /^(?:\d+|-)$/.test(target)) return judged(0, 'redirects output');
  const shown = display(rawTarget);
  if (isHomeConfigPath(target))
    return judged(3, `writes ${shown}, a file that configures what programs run (${op})`);
  switch (op) {
    case '>':
    case '>|':
    case '&>':
    case '>&':
      return judged(3, `overwrites ${shown} (${op})`);
    case '>>':
    case '&>>':
      return judged(2, `appends to ${shown}`);
    case '<>':
      return judged(2, `opens ${shown} for writing`);
    default:
      return judged(0, 'reads input');
  }
}

interface ArgvContext {
  piped: boolean;
  heredoc: HereDoc | undefined;
  local: Set<string>;
  /** Names whose values come from file names or contents (see localNames). */
  tainted: Set<string>;
  /** Names whose values come from file contents: unseen values even when assigned here. */
  content: Set<string>;
}

function judgeArgv(argv: string[], ctx: ArgvContext, depth: number): Judgement {
  const word = argv[0];
  if (word === undefined) return judged(0, 'nothing runs');
  if (depth > 8) return judged(3, 'opaque command (wrapped too deeply to follow)');
  if (hasExpansion(word)) {
    const what = expansions(word).includes('!cmd') ? 'command substitution' : 'variable';
    return judged(3, `opaque command (${what} as the command word: ${display(word)})`);
  }
  if (word.includes(ANSI_MARK)) return judged(3, 'opaque command (ANSI-C quoting builds the command word)');
  if (word.includes(BRACE_MARK)) return judged(3, 'opaque command (brace expansion builds the command word)');
  let name = word;
  if (
    name.includes(GLOB_MARK) ||
    /[*?]/.test(name) ||
    (name.includes('[') && name !== '[' && name !== '[[')
  ) {
    return judged(3, `opaque command (a glob builds the command word: ${display(word)})`);
  }
  if (name.includes('/')) {
    const program = PROGRAM_PATH.exec(name)?.[1];
    if (!program) return judged(3, `runs ${display(name)}, a script or program the classifier cannot see`);
    name = program;
  }
  const raw = argv.slice(1);
  const args = raw.map(unmark);
  if (NAME_TAKERS.has(name) && args.some((a) => a.includes('[') && /[$`]/.test(a))) {
    return judged(3, `opaque command (${name} is given a subscript that can run commands)`);
  }
  const expanded = raw.some(hasExpansion);
  const named = expanded ? expandedName(name, raw) : undefined;
  if (named) return { ...named, program: name, subcommand: null };
  // An unquoted substitution splits into words, `-v` and a name with a subscript among them.
  if (
    expanded &&
    (name === 'test' || name === '[') &&
    !ctx.local.has(SUBSTITUTED) &&
    raw.some((a) => expansions(a).includes(SUBSTITUTED))
  )
    return judged(
      3,
      `opaque command (${name} is given a substitution's output, which can hold -v and a name)`,
      {
        program: name,
        subcommand: null,
      },
    );
  const wrapper = Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined;
  if (wrapper) {
    // Raw words, so the wrapped command keeps its marks (a glob, a substitution) when judged.
    const unwrapped = wrapper(raw);
    if ('score' in unwrapped) {
      unwrapped.program ??= name;
      unwrapped.subcommand ??= null;
      return unwrapped;
    }
    let inner = judgeArgv(unwrapped.argv, ctx, depth + 1);
    for (const a of unwrapped.assignments) inner = worse(inner, assignmentScore(nameOf(a)));
    return inner;
  }
  const ruleContext: RuleContext = {
    name,
    piped: ctx.piped,
    inner: (inner: string[]) =>
      judgeArgv(
        inner,
        { local: ctx.local, tainted: ctx.tainted, content: ctx.content, piped: false, heredoc: undefined },
        depth + 1,
      ),
  };
  if (ctx.heredoc) ruleContext.heredoc = ctx.heredoc;
  const rule = ruleFor(name);
  // Rules return a fresh object each call, so it is completed in place.
  const result = rule ? rule(args, ruleContext) : unknownRule(args, ruleContext);
  result.program ??= name;
  result.subcommand ??= null;
  if (!rule) {
    // Nothing models this program: only its exact words may ever be granted.
    result.known = false;
    result.grantKey = JSON.stringify([name, ...args]);
  }
  const glob = result.score < 3 ? globAsOption(name, raw) : undefined;
  if (glob) return { ...result, score: glob.score, reason: glob.reason };
  if (!expanded) return result;
  if (result.score < 3 && !GLOB_SAFE.has(name) && !VARIABLES_OK.has(name)) {
    const from = taintedArgument(raw, ctx.tainted);
    if (from !== undefined) {
      result.score = 3;
      result.reason =
        from === SUBSTITUTED
          ? `${name} is given a substitution's output, which can become options it obeys`
          : `${name} is given $${from}, taken from file names or contents, which can become options it obeys`;
      return result;
    }
  }
  if (result.score === 0 && !VARIABLES_OK.has(name)) {
    const unknown = unknownVariable(args, ctx.local, ctx.content);
    if (unknown !== undefined) {
      const shown = unknown.startsWith('!') ? 'a special parameter' : `$${unknown}`;
      result.score = 1;
      result.reason = `${name} uses ${shown}, whose value the classifier cannot see`;
    }
  }
  return result;
}

/** The tainted name an argument before `--` starts with (`notes/$f` cannot be an option). */
function taintedArgument(raw: string[], tainted: Set<string>): string | undefined {
  for (const a of raw) {
    if (a === '--') return undefined;
    if (!a.startsWith(VAR_OPEN)) continue;
    const name = a.slice(1, a.indexOf(VAR_CLOSE));
    if (tainted.has(name)) return name;
  }
  return undefined;
}

function unknownVariable(args: string[], local: Set<string>, content: Set<string>): string | undefined {
  for (const a of args) {
    if (!hasExpansion(a)) continue;
    const name = expansions(a).find((v) => !local.has(v) || content.has(v));
    if (name !== undefined) return name;
  }
  return undefined;
}
