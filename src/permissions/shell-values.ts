// Where a command's variables get their values, as far as the classifier can tell: assigned here,
// taken from file names (a glob) or from file contents (a substitution, read), or printed by a
// substitution whose output cannot name a file or an option ($(date +%F), $(pwd)).
import { leadingGlob } from './argument-risks.ts';
import {
  commandView,
  expansions,
  hasExpansion,
  isAssignment,
  type ParsedCommand,
  type Segment,
} from './shell-parse.ts';

/** The name a substitution's output has among a word's expansions. */
export const SUBSTITUTED = '!cmd';

export const nameOf = (assignment: string): string => assignment.slice(0, assignment.search(/\+?=|\[/));

/** Commands whose output cannot name a file elsewhere or become an option. */
export function pathSafeOutput(segment: Segment): boolean {
  const view = commandView(segment);
  if (segment.redirects.length > 0 || view.assignments.length > 0 || segment.piped) return false;
  const [program, ...args] = view.argv;
  if (args.some(hasExpansion)) return false;
  switch (program) {
    case 'pwd':
    case 'whoami':
    case 'nproc':
      return args.length === 0;
    case 'date':
      // Only conversion specifiers and separators: `date +/etc/passwd` prints a path.
      // No word of the output may start with `-` (`+-%p` prints -PM, an option).
      return args.every(
        (a) => /^(?:-u|--utc|\+(?:%[-_0^#]?[A-Za-z]|[-_:.,T ])+)$/.test(a) && !/(?:^\+|\s)-/.test(a),
      );
    case 'id':
      return args.every((a) => /^-[ugGnr]+$/.test(a));
    case 'uname':
      return args.every((a) => /^-[asnrvmpio]+$/.test(a));
    default:
      return false;
  }
}

/**
 * Variables the command itself assigns (their values pass the guard where they are set), and of
 * those the tainted ones: values taken from file names or file contents (`for f in *`, `read f`,
 * `x=$(ls)`), which can be named like options.
 */
export function localNames(parsed: ParsedCommand, substitutionsSafe: boolean): Names {
  const local = new Set<string>();
  // Values from file contents (substitutions, read) are any string; from globs, names of files here.
  const content = new Set<string>(substitutionsSafe ? [] : [SUBSTITUTED]);
  const tainted = new Set<string>(content);
  const expands = (word: string, names: Set<string>) =>
    hasExpansion(word) && expansions(word).some((v) => names.has(v));
  const mark = (name: string, words: string[]) => {
    if (words.some((w) => expands(w, content))) content.add(name);
    if (words.some((w) => leadingGlob(w) || expands(w, tainted))) tainted.add(name);
  };
  for (const segment of parsed.segments) {
    const view = commandView(segment);
    for (const a of view.assignments) {
      local.add(nameOf(a));
      mark(nameOf(a), [a]);
    }
    const program = view.argv[0];
    if ((view.keyword === 'for' || view.keyword === 'select') && program) {
      local.add(program);
      mark(program, view.argv.slice(1));
    }
    if (program === 'export' || program === 'local' || program === 'declare' || program === 'typeset') {
      for (const a of view.argv.slice(1)) if (isAssignment(a)) local.add(nameOf(a));
    }
    if (program === 'read' || program === 'mapfile' || program === 'readarray') {
      for (const a of view.argv.slice(1)) {
        if (!/^[A-Za-z_]\w*$/.test(a)) continue;
        content.add(a);
        tainted.add(a);
      }
    }
  }
  return { local, tainted, content };
}

export interface Names {
  /** Variables the command assigns itself. */
  local: Set<string>;
  /** Of all names, those whose values come from file names or contents: they can look like options. */
  tainted: Set<string>;
  /** Those whose values come from file contents: any string, any path. */
  content: Set<string>;
}
