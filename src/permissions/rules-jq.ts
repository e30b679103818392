// jq cannot run programs, but it can read the environment (env, $ENV), files named in its
// options and modules. It is read-only only when its filter is tokenized (strings with their
// \(…) interpolations are code too) and uses none of those; -f, --rawfile, --slurpfile and -L
// are outside the subset.
import { type Judgement, judged } from './judgement.ts';
import { type OptionTable, parseArgs, shown } from './options.ts';
import { BUILT } from './script-lex.ts';
import { VAR_OPEN } from './shell-marks.ts';

const FORBIDDEN = new Map([
  ['env', 'jq reads the environment, which holds secrets'],
  ['ENV', 'jq reads the environment, which holds secrets'],
  ['__loc__', 'jq $__loc__ is outside the safe subset'],
  ['__prog_args', 'jq $__prog_args is outside the safe subset'],
  ['input_filename', 'jq input_filename is outside the safe subset'],
  ['import', 'jq loads a module'],
  ['include', 'jq loads a module'],
  ['modulemeta', 'jq reads module files'],
  ['get_search_list', 'jq reads its module search list'],
  ['getpath_env', 'jq reads the environment'],
]);

const NAME = /\$?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*/y;

/**
 * The names a jq filter uses (identifiers, and `$vars` without their `$`), outside plain string text. A name after `.`
 * is a field (`.env`), not a builtin. Returns a reason when the text cannot be read.
 */
export function jqNames(p: string): string[] | string {
  const names: string[] = [];
  const stack: number[] = [0]; // paren depth per open string interpolation
  let i = 0;
  let inString = false;
  while (i < p.length) {
    const c = p[i] as string;
    if (inString) {
      if (c === '\\') {
        if (p[i + 1] === '(') {
          stack.push(0);
          inString = false;
          i += 2;
          continue;
        }
        i += 2;
        continue;
      }
      if (c === '"') inString = false;
      i++;
      continue;
    }
    if (c === '"') {
      inString = true;
      i++;
      continue;
    }
    if (c === '#') {
      // jq 1.7 continues a comment over a backslash-newline and 1.6 does not: refuse both readings.
      while (i < p.length && p[i] !== '\n') {
        if (p[i] === '\\' && (p[i + 1] === '\n' || p[i + 1] === '\r'))
          return 'jq comment continued over a line';
        i++;
      }
      continue;
    }
    if (c === '(') stack[stack.length - 1] = (stack[stack.length - 1] as number) + 1;
    if (c === ')') {
      const depth = stack[stack.length - 1] as number;
      if (depth === 0) {
        if (stack.length === 1) return 'jq filter with an unbalanced )';
        stack.pop();
        inString = true;
        i++;
        continue;
      }
      stack[stack.length - 1] = depth - 1;
    }
    NAME.lastIndex = i;
    const word = NAME.exec(p);
    if (word) {
      // `.env` is a field (jq's lexer needs the dot right before it); `$ ENV` is $ENV in jq 1.7.
      if (p[i - 1] !== '.' || word[0].startsWith('$')) names.push(word[0].replace(/^\$/, ''));
      i += word[0].length;
      continue;
    }
    i++;
  }
  if (inString || stack.length > 1) return 'jq filter with an unterminated string';
  return names;
}

const JQ: OptionTable = {
  short: {
    n: 'null-input',
    r: 'raw-output',
    j: 'join-output',
    a: 'ascii-output',
    s: 'slurp',
    c: 'compact-output',
    C: 'color-output',
    M: 'monochrome-output',
    S: 'sort-keys',
    e: 'exit-status',
    R: 'raw-input',
    f: 'from-file',
    L: 'library-path',
    h: 'help',
    V: 'version',
  },
  long: {
    'null-input': 'flag',
    'raw-output': 'flag',
    'raw-output0': 'flag',
    'join-output': 'flag',
    'ascii-output': 'flag',
    slurp: 'flag',
    'compact-output': 'flag',
    'color-output': 'flag',
    'monochrome-output': 'flag',
    'sort-keys': 'flag',
    'exit-status': 'flag',
    'raw-input': 'flag',
    'from-file': 'value',
    'library-path': 'value',
    tab: 'flag',
    indent: 'value',
    stream: 'flag',
    'stream-errors': 'flag',
    seq: 'flag',
    unbuffered: 'flag',
    arg: 'two',
    argjson: 'two',
    slurpfile: 'two',
    rawfile: 'two',
    args: 'flag',
    jsonargs: 'flag',
    'build-configuration': 'flag',
    help: 'flag',
    version: 'flag',
  },
};
const OUTSIDE = new Set(['from-file', 'library-path', 'slurpfile', 'rawfile']);

export function jqRule(args: string[]): Judgement {
  const parsed = parseArgs(args, JQ);
  const unknown = parsed.unknown[0];
  if (unknown !== undefined) return judged(1, `jq ${unknown} is an option the classifier does not model`);
  const outside = parsed.options.find((o) => OUTSIDE.has(o.name));
  if (outside) return judged(3, `jq ${shown(outside)} reads a program or file outside the safe subset`);
  const filter = parsed.operands[0];
  if (filter === undefined) return judged(0, 'jq only prints');
  if (filter.length > 8192) return judged(3, 'jq filter too long to read');
  if (filter.includes(VAR_OPEN)) return judged(3, BUILT('jq filter'));
  const names = jqNames(filter);
  if (typeof names === 'string') return judged(3, names);
  for (const name of names) {
    const why = FORBIDDEN.get(name);
    if (why) return judged(3, why);
  }
  return judged(0, 'jq only prints');
}
