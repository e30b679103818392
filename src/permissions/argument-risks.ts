// Risks that come from where a command's words come from rather than from the program: a glob that
// can expand to a file named like an option (`sed s/a/b/ *` with a planted `--expression=e id`),
// expansions handed to builtins that evaluate names (`read "$x"` with x='a[$(id)]'), and writes to
// the files that configure git and the programs HOME (the workspace) configures. Pure functions over the raw (marked) words.
import { isHomeConfigPath } from './home-config.ts';
import { type Judgement, judged } from './judgement.ts';
import { GLOB_MARK } from './shell-marks.ts';
import { expansions, hasExpansion, unmark } from './shell-parse.ts';

/**
 * Programs every one of whose options only changes what they print: a glob expanding to an
 * option-like file name cannot make them run or write anything.
 */
export const GLOB_SAFE = new Set(
  `ls dir vdir cat tac nl head tail wc cut paste join comm tr fold fmt expand unexpand rev column od
   hexdump strings stat du df echo true false : basename dirname realpath readlink md5sum sha1sum
   sha224sum sha256sum sha384sum sha512sum b2sum cksum sum base32 base64 basenc grep egrep fgrep
   zcat bzcat xzcat zstdcat lzcat lsattr getfacl readelf diff cmp numfmt pr look tree`.split(/\s+/),
);

/** A word the shell expands from file names, whose first character is a wildcard. */
export const leadingGlob = (word: string): boolean =>
  word.startsWith(GLOB_MARK) && /^[*?[]/.test(word.slice(1));

/** 3 when a glob before `--` may expand to an option of a program whose options can run or write. */
export function globAsOption(program: string, rawArgs: readonly string[]): Judgement | undefined {
  if (GLOB_SAFE.has(program)) return undefined;
  for (const a of rawArgs) {
    if (a === '--') return undefined;
    if (leadingGlob(a))
      return judged(
        3,
        `${program} ${unmark(a)}: the glob can expand to a file named like an option, which ${program} would obey`,
      );
  }
  return undefined;
}

/** Builtins that take variable names as operands; bash evaluates a subscript in them (a[$(id)]). */
const NAME_OPERANDS = new Set(['read', 'unset', 'mapfile', 'readarray', 'getopts']);
const DECLARERS = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);
const TESTS = new Set(['printf', 'test', '[']);
/** Options of read and mapfile whose value is not a name. */
const NOT_A_NAME = new Set(['-p', '-t', '-d', '-n', '-N', '-u', '-C', '-c', '-O', '-s', '-i']);

/** 3 when an expansion can hand a name-evaluating builtin a name with a subscript. */
export function expandedName(program: string, rawArgs: readonly string[]): Judgement | undefined {
  if (!NAME_OPERANDS.has(program) && !DECLARERS.has(program) && !TESTS.has(program)) return undefined;
  const risky = (a: string) => hasExpansion(a) && expansions(a).some((v) => v !== '!arith');
  const found = (what: string) =>
    judged(3, `opaque command (${program} is given ${what} it evaluates as a variable name)`);
  if (NAME_OPERANDS.has(program)) {
    for (let k = 0; k < rawArgs.length; k++) {
      const a = rawArgs[k] as string;
      if (NOT_A_NAME.has(a) || (a.length > 2 && NOT_A_NAME.has(a.slice(0, 2)))) {
        if (a.length === 2) k++;
        continue;
      }
      if (risky(a)) return found('an expansion');
    }
  }
  if (DECLARERS.has(program) && rawArgs.some((a) => risky(a.split('=')[0] as string)))
    return found('an expansion');
  if (program === 'printf') {
    const v = rawArgs.indexOf('-v');
    const first = rawArgs[0];
    if ((first !== undefined && risky(first) && first !== '--') || (v >= 0 && risky(rawArgs[v + 1] ?? '')))
      return found('an expanded format or -v name');
  }
  if (program === 'test' || program === '[') {
    // Only -v takes a name; an expansion can become -v only with another expansion right after it.
    for (let k = 0; k + 1 < rawArgs.length; k++) {
      const a = rawArgs[k] as string;
      if (risky(rawArgs[k + 1] as string) && (a === '-v' || risky(a))) return found('an expanded -v operand');
    }
  }
  return undefined;
}

/**
 * 3 when a command that writes (score 1–2) names a git control file or a HOME configuration file
 * among its words. git's own staging commands only read them, so only `git mv` counts.
 */
export function writesControlFile(
  program: string,
  subcommand: string | null | undefined,
  words: readonly string[],
) {
  if (program === 'git' && subcommand !== 'mv') return undefined;
  for (const word of words) {
    const target = unmark(word);
    if (isHomeConfigPath(target))
      return judged(3, `${program} writes ${target}, a file that configures what programs run`);
  }
  return undefined;
}
