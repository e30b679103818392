// awk is read-only only when its program is tokenized (strings, regex literals with their bracket
// expressions, comments) and holds none of: system(), a pipe (`cmd | getline`, `print | cmd`,
// gawk's |&), a print/printf redirect, getline from anything but a literal file, ENVIRON or
// PROCINFO, or gawk's @ directives and indirect calls. Options are modelled the same way.
import { type Judgement, judged } from './judgement.ts';
import { type OptionTable, parseArgs, shown } from './options.ts';
import { BUILT, bracketEnd } from './script-lex.ts';
import { VAR_OPEN } from './shell-marks.ts';

export interface AwkRisk {
  outside?: string;
  /** Files read with `getline < "file"`; the guard judges them. */
  reads: string[];
}

/** Tokens after which `/` divides; anywhere else it opens a regex literal. */
const VALUE_END = /^(?:[A-Za-z_]\w*|\d[\d.eE]*|\)|\]|"s|\/r)$/;
/** Keywords after which a `/` can only open a regex. */
const REGEX_AFTER = new Set(['print', 'printf', 'return', 'case', 'else', 'do', 'exit']);
/**
 * Tokens after which the classifier cannot be sure what `/` is (`getline / 2`, `x++ /re/`): a
 * wrong guess would read a regex as code or code as a regex, so the program is refused instead.
 */
const UNSURE_BEFORE_SLASH = new Set(
  `getline in BEGIN END BEGINFILE ENDFILE function func if while for switch default next nextfile
   break continue delete ++ --`.split(/\s+/),
);
const FORBIDDEN = new Map([
  ['system', 'awk runs shell commands with system()'],
  ['ENVIRON', 'awk reads the environment, which holds secrets'],
  ['PROCINFO', 'awk reads PROCINFO'],
]);

const WORD = /0[xX][\da-fA-F]+|[A-Za-z_]\w*|\d[\d.]*(?:[eE][+-]?\d+)?/y;
const OPERATOR =
  /\|&|\|\||&&|>>|<=|>=|==|!=|!~|\+\+|--|[-+*/%^]=|\*\*=?|\n|[{}()[\];,<>!~?:=+\-*/%^$|&@`'\\.]/y;

/** The word, number or operator at p[i]. */
function lexeme(p: string, i: number): string | undefined {
  WORD.lastIndex = i;
  const word = WORD.exec(p);
  if (word) return word[0];
  OPERATOR.lastIndex = i;
  return OPERATOR.exec(p)?.[0];
}

/** Splits an awk program into tokens: words, numbers, "s" (string), /r (regex), operators. */
export function awkTokens(p: string): { tokens: string[]; strings: string[] } | string {
  const tokens: string[] = [];
  const strings: string[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i] as string;
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '\\' && p[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (c === '#') {
      while (i < p.length && p[i] !== '\n') i++;
      continue;
    }
    if (c === '"') {
      let k = i + 1;
      let text = '';
      while (k < p.length && p[k] !== '"') {
        if (p[k] === '\n') return 'an awk string the classifier cannot read';
        if (p[k] === '\\') {
          text += p[k + 1] ?? '';
          k += 2;
        } else text += p[k++];
      }
      if (k >= p.length) return 'an unterminated awk string';
      strings.push(text);
      tokens.push('"s');
      i = k + 1;
      continue;
    }
    const prev = tokens[tokens.length - 1] ?? '';
    if (c === '/' && UNSURE_BEFORE_SLASH.has(prev)) return `awk ${prev} followed by / is ambiguous`;
    if (c === '/' && !(VALUE_END.test(prev) && !REGEX_AFTER.has(prev))) {
      let k = i + 1;
      while (k < p.length && p[k] !== '/') {
        if (p[k] === '\n') return 'an awk regex the classifier cannot read';
        if (p[k] === '\\') k += 2;
        else if (p[k] === '[') {
          const end = bracketEnd(p, k);
          // Implementations disagree whether / ends the regex inside [ ]: refuse both readings.
          if (end < 0 || p.slice(k, end).includes('/')) return 'an awk regex the classifier cannot read';
          k = end;
        } else k++;
      }
      if (k >= p.length) return 'an unterminated awk regex';
      tokens.push('/r');
      i = k + 1;
      continue;
    }
    const token = lexeme(p, i);
    if (token === undefined) return `awk text the classifier cannot read (${JSON.stringify(c)})`;
    tokens.push(token);
    i += token.length;
  }
  return { tokens, strings };
}

/** Judges an awk program against the safe subset. */
export function awkProgramRisk(program: string): AwkRisk {
  const reads: string[] = [];
  const lexed = awkTokens(program);
  if (typeof lexed === 'string') return { outside: lexed, reads };
  const { tokens, strings } = lexed;
  let stringAt = 0;
  let depth = 0;
  let printDepth = -1;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k] as string;
    const outside = (why: string): AwkRisk => ({ outside: why, reads });
    if (t === '"s') stringAt++;
    const forbidden = FORBIDDEN.get(t);
    if (forbidden) return outside(forbidden);
    if (t === '@' || t === '`' || t === "'" || t === '\\')
      return outside(`awk ${t} is outside the safe subset`);
    if (t === '|' || t === '|&') return outside('awk pipes to or from a shell command');
    if (t === '(' || t === '[') depth++;
    else if (t === ')' || t === ']') {
      depth--;
      if (depth < printDepth) printDepth = -1;
    } else if (t === ';' || t === '\n' || t === '{' || t === '}') printDepth = -1;
    else if (t === 'print' || t === 'printf') printDepth = depth;
    else if ((t === '>' || t === '>>') && printDepth === depth)
      return outside('awk writes a file with > or >> after print');
    else if (t === 'getline') {
      // Plain `getline` and `getline var` read the input; `getline [var] < "file"` a literal file.
      let n = k + 1;
      if (/^[A-Za-z_]\w*$/.test(tokens[n] ?? '') && tokens[n + 1] !== '(') n++;
      if (tokens[n] === '<') {
        if (tokens[n + 1] !== '"s') return outside('awk reads a file named by an expression');
        const file = strings[stringAt] ?? '';
        if (file.startsWith('/inet')) return outside('awk opens a network connection');
        // The literal must stand alone: `getline < "a" b` concatenates.
        if (!/^(?:\)|;|\n|\}|>|<|=|!|&&|\|\|)?$/.test(tokens[n + 2] ?? ''))
          return outside('awk reads a file named by an expression');
        reads.push(file);
      }
    }
  }
  return { reads };
}

const AWK: OptionTable = {
  short: {
    F: 'field-separator',
    v: 'assign',
    f: 'file',
    e: 'source',
    E: 'exec',
    i: 'include',
    l: 'load',
    o: 'pretty-print',
    p: 'profile',
    d: 'dump-variables',
    D: 'debug',
    W: 'W',
    b: 'characters-as-bytes',
    c: 'traditional',
    C: 'copyright',
    g: 'gen-pot',
    h: 'usage',
    L: 'lint',
    M: 'bignum',
    n: 'non-decimal-data',
    N: 'use-lc-numeric',
    O: 'optimize',
    P: 'posix',
    r: 're-interval',
    s: 'no-optimize',
    S: 'sandbox',
    t: 'lint-old',
    V: 'version',
  },
  long: {
    'field-separator': 'value',
    assign: 'value',
    file: 'value',
    source: 'value',
    exec: 'value',
    include: 'value',
    load: 'value',
    'pretty-print': 'optional',
    profile: 'optional',
    'dump-variables': 'optional',
    debug: 'optional',
    W: 'value',
    'characters-as-bytes': 'flag',
    traditional: 'flag',
    copyright: 'flag',
    'gen-pot': 'flag',
    usage: 'flag',
    help: 'flag',
    lint: 'optional',
    bignum: 'flag',
    'non-decimal-data': 'flag',
    'use-lc-numeric': 'flag',
    optimize: 'flag',
    posix: 'flag',
    're-interval': 'flag',
    'no-optimize': 'flag',
    sandbox: 'flag',
    'lint-old': 'flag',
    version: 'flag',
  },
  abbreviate: true,
};
const AWK_DANGER = new Map([
  ['file', 'loads a program file the classifier cannot read'],
  ['exec', 'loads a program file the classifier cannot read'],
  ['include', 'loads a program file the classifier cannot read'],
  ['load', 'loads a shared library'],
  ['pretty-print', 'writes a file'],
  ['profile', 'writes a file'],
  ['dump-variables', 'writes a file'],
  ['debug', 'runs the debugger, which runs commands'],
  ['gen-pot', 'prints strings only'],
]);
const MAX_PROGRAM = 8192;

export function awkRule(args: string[]): Judgement {
  const parsed = parseArgs(args, AWK);
  const unknown = parsed.unknown[0];
  if (unknown !== undefined) return judged(3, `awk ${unknown} is an option the classifier does not model`);
  for (const o of parsed.options) {
    const danger = AWK_DANGER.get(o.name);
    if (danger) return judged(3, `awk ${shown(o)} ${danger}`);
    if (o.name === 'W' && !/^(?:v|version|usage|help)$/.test(o.value ?? ''))
      return judged(3, `awk -W ${o.value ?? ''} is outside the safe subset`);
  }
  const programs = parsed.options.filter((o) => o.name === 'source').map((o) => o.value ?? '');
  if (programs.length === 0) programs.push(parsed.operands[0] ?? '');
  const paths: string[] = [];
  for (const program of programs) {
    if (program.length > MAX_PROGRAM) return judged(3, 'awk program too long to read');
    if (program.includes(VAR_OPEN)) return judged(3, BUILT('awk program'));
    const risk = awkProgramRisk(program);
    if (risk.outside) return judged(3, risk.outside);
    paths.push(...risk.reads);
  }
  return judged(
    0,
    paths.length > 0 ? 'awk reads files with getline' : 'awk only prints',
    paths.length > 0 ? { paths } : {},
  );
}
