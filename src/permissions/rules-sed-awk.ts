// sed carries a program of its own. It is read-only only when the script is made entirely of an
// explicitly safe subset, tokenized as GNU sed reads it (bracket expressions included, so
// `s/[/]//e` is seen to end in the e flag): addresses, s///flags without e or w, y, p, d, q, =,
// branches, hold space and text commands. Anything else asks at 3. awk is in rules-awk.ts.
import { type Judgement, judged } from './judgement.ts';
import { type OptionTable, parseArgs, shown } from './options.ts';
import { BUILT, bracketEnd } from './script-lex.ts';
import { VAR_OPEN } from './shell-marks.ts';

export { awkRule } from './rules-awk.ts';

export interface SedRisk {
  /** Why the script is outside the safe subset; undefined when it is inside. */
  outside?: string;
  /** Files the script reads (r, R); the guard judges them. */
  reads: string[];
}

/** Commands without an argument. */
const PLAIN = new Set('{}=dDgGhHnNpPxzF'.split(''));
const S_FLAGS = /[gpiImM0-9]/;

/** Walks a sed script command by command; stops at the first thing outside the subset. */
export function sedScriptRisk(script: string): SedRisk {
  const reads: string[] = [];
  const s = script;
  let i = 0;
  const out = (why: string): SedRisk => ({ outside: why, reads });
  /** Skips a regex ending at `delim`; false when it cannot be read unambiguously. */
  const regex = (delim: string): boolean => {
    while (i < s.length) {
      const c = s[i] as string;
      if (c === delim) {
        i++;
        return true;
      }
      if (c === '\n') return false;
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === '[') {
        const end = bracketEnd(s, i);
        // Versions of sed disagree whether the delimiter ends the regex inside [ ]: refuse both.
        if (end < 0 || s.slice(i, end).includes(delim) || s.slice(i, end).includes('\n')) return false;
        i = end;
        continue;
      }
      i++;
    }
    return false;
  };
  /** The replacement of s: backslash escapes, ends at `delim`. */
  const replacement = (delim: string): boolean => {
    while (i < s.length) {
      const c = s[i] as string;
      if (c === delim) {
        i++;
        return true;
      }
      i += c === '\\' ? 2 : 1;
    }
    return false;
  };
  const address = (): boolean => {
    const c = s[i] ?? '';
    if (/\d/.test(c)) {
      while (/[\d~]/.test(s[i] ?? '')) i++;
    } else if (c === '$') i++;
    else if (c === '/' || c === '\\') {
      if (c === '\\') i++;
      const delim = s[i++];
      if (delim === undefined || delim === '\n' || delim === '\\') return false;
      if (!regex(delim)) return false;
      while (s[i] === 'I' || s[i] === 'M') i++;
    }
    return true;
  };
  const toEol = () => {
    const start = i;
    while (i < s.length && s[i] !== '\n') i++;
    return s.slice(start, i).trim();
  };
  /** After a command: only blanks, then `;`, newline, `}` or `#`. */
  const ended = () => {
    while (s[i] === ' ' || s[i] === '\t') i++;
    return i >= s.length || /[;\n}#]/.test(s[i] as string);
  };
  while (i < s.length) {
    while (i < s.length && /[\s;]/.test(s[i] as string)) i++;
    if (i >= s.length) break;
    if (s[i] === '#') {
      toEol();
      continue;
    }
    if (!address()) return out('a sed address the classifier cannot read');
    if (s[i] === ',') {
      i++;
      if (s[i] === '+' || s[i] === '~') i++;
      if (!address()) return out('a sed address the classifier cannot read');
    }
    while (s[i] === ' ' || s[i] === '\t' || s[i] === '!') i++;
    const c = s[i++];
    if (c === undefined) break;
    if (PLAIN.has(c)) {
      if (c !== '}' && c !== '{' && !ended()) return out(`sed ${c} followed by text it does not take`);
      continue;
    }
    if (c === 's' || c === 'y') {
      const delim = s[i++];
      if (delim === undefined || delim === '\n' || delim === '\\')
        return out('a sed s command without a delimiter');
      if (!regex(delim) || !(c === 's' ? replacement(delim) : regex(delim)))
        return out(`a sed ${c} command the classifier cannot read`);
      if (c === 's') {
        while (i < s.length && S_FLAGS.test(s[i] as string)) i++;
        if (s[i] === 'e') return out('sed runs shell commands (the e flag)');
        if (s[i] === 'w' || s[i] === 'W') return out('sed writes files (the w flag)');
      }
      if (!ended()) return out(`a sed ${c} command with flags outside the safe subset`);
    } else if (c === 'a' || c === 'i' || c === 'c') {
      // Text to the end of the line; `a\` continues over escaped newlines.
      while (i < s.length && s[i] !== '\n') i += s[i] === '\\' ? 2 : 1;
    } else if (c === 'r' || c === 'R') {
      const file = toEol();
      if (file === '' || file === '/dev/stdin') continue;
      reads.push(file);
    } else if (c === ':' || c === 'b' || c === 't' || c === 'T') {
      while (s[i] === ' ') i++;
      const start = i;
      while (i < s.length && !/[;\n}]/.test(s[i] as string)) i++;
      if (!/^[\w.-]*\s*$/.test(s.slice(start, i))) return out('a sed label the classifier cannot read');
    } else if (c === 'q' || c === 'Q' || c === 'l' || c === 'L') {
      while (/[\d ]/.test(s[i] ?? '')) i++;
      if (!ended()) return out(`sed ${c} followed by text it does not take`);
    } else if (c === 'e') return out('sed runs shell commands (the e command)');
    else if (c === 'w' || c === 'W') return out('sed writes files (the w command)');
    else return out(`sed command ${JSON.stringify(c)} is outside the safe subset`);
  }
  return { reads };
}

const SED: OptionTable = {
  short: {
    n: 'quiet',
    e: 'expression',
    f: 'file',
    i: 'in-place',
    l: 'line-length',
    E: 'regexp-extended',
    r: 'regexp-extended',
    s: 'separate',
    u: 'unbuffered',
    z: 'null-data',
    b: 'binary',
  },
  long: {
    quiet: 'flag',
    silent: 'flag',
    expression: 'value',
    file: 'value',
    'in-place': 'optional',
    'line-length': 'value',
    'regexp-extended': 'flag',
    separate: 'flag',
    unbuffered: 'flag',
    'null-data': 'flag',
    'zero-terminated': 'flag',
    binary: 'flag',
    debug: 'flag',
    posix: 'flag',
    sandbox: 'flag',
    'follow-symlinks': 'flag',
    help: 'flag',
    version: 'flag',
  },
  abbreviate: true,
};

const MAX_PROGRAM = 8192;

export function sedRule(args: string[]): Judgement {
  const parsed = parseArgs(args, SED);
  const unknown = parsed.unknown[0];
  if (unknown !== undefined) return judged(3, `sed ${unknown} is an option the classifier does not model`);
  if (parsed.options.some((o) => o.name === 'file'))
    return judged(3, 'sed -f runs a script file the classifier cannot read');
  const scripts = parsed.options.filter((o) => o.name === 'expression').map((o) => o.value ?? '');
  const operands = [...parsed.operands];
  if (scripts.length === 0 && operands.length > 0) scripts.push(operands.shift() as string);
  const reads: string[] = [];
  for (const script of scripts) {
    if (script.length > MAX_PROGRAM) return judged(3, 'sed script too long to read');
    if (script.includes(VAR_OPEN)) return judged(3, BUILT('sed script'));
    const risk = sedScriptRisk(script);
    if (risk.outside) return judged(3, risk.outside);
    reads.push(...risk.reads);
  }
  const extra = reads.length > 0 ? { paths: reads } : {};
  const inPlace = parsed.options.find((o) => o.name === 'in-place');
  if (inPlace) return judged(2, `sed -i edits files in place (${shown(inPlace)})`, extra);
  return judged(0, 'sed only prints', extra);
}
