// shell-quote's reading of the commands most shell calls are (words, quotes, backslashes and
// operators over printable ASCII), by a plain scan instead of the regular expression shell-quote
// builds on every call.
// Anything it does not model (`$`, `#`, a newline, an unclosed quote, other characters) is left
// to shell-quote itself: `quickTokens` answers undefined and the caller parses as before. A
// property test holds it to shell-quote's own output, so the two never read a command apart.
import type { parse } from 'shell-quote';

type Entry = ReturnType<typeof parse>[number];

const SPACE = 0x20;
const TAB = 0x09;

/** The scan's marks (shell-marks.ts) and SUBSTITUTION_MARK: ordinary word characters to shell-quote. */
const isMark = (code: number) => code >= 0x01 && code <= 0x07;

/** shell-quote's control operator at `i`, in the order its pattern tries them; undefined if none. */
function operatorAt(s: string, i: number): string | undefined {
  const c = s[i];
  const next = s[i + 1];
  switch (c) {
    case '|':
      return next === '|' ? '||' : next === '&' ? '|&' : '|';
    case '&':
      if (next === '&') return '&&';
      if (next === '>') return s[i + 2] === '>' ? '&>>' : '&>';
      return '&';
    case ';':
      if (next === ';') return s[i + 2] === '&' ? ';;&' : ';;';
      return next === '&' ? ';&' : ';';
    case '<':
      if (next === '(') return '<(';
      if (next === '<') {
        const third = s[i + 2];
        if (third === '<') return '<<<';
        if (third === '-') return '<<-';
        return third === '(' ? '<' : '<<';
      }
      return next === '&' ? '<&' : next === '>' ? '<>' : '<';
    case '>':
      if (next === '>') return '>>';
      return next === '&' ? '>&' : next === '|' ? '>|' : next === '(' ? '>(' : '>';
    case '(':
    case ')':
      return c;
    default:
      return undefined;
  }
}

/** Characters that end an unquoted word (shell-quote's META and whitespace). */
const ENDS_WORD = new Set(['|', '&', ';', '(', ')', '<', '>', ' ', '\t']);

/** Every character is one this reader models: printable ASCII but `$` and `#`, tab, the marks. */
function modelled(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (code === TAB || isMark(code)) continue;
    if (code < SPACE || code > 0x7e || code === 0x24 /* $ */ || code === 0x23 /* # */) return false;
  }
  return true;
}

/**
 * One word from `start` (not whitespace, not an operator): its text and where it ends, or
 * undefined when a quote is not closed or a backslash ends the text.
 */
function wordAt(s: string, start: number): { entry: Entry; end: number } | undefined {
  let out = '';
  let glob = false;
  let i = start;
  for (; i < s.length; i++) {
    const c = s[i] as string;
    if (c === "'") {
      const close = s.indexOf("'", i + 1);
      if (close < 0) return undefined;
      out += s.slice(i + 1, close);
      i = close;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < s.length && s[j] !== '"'; j++) {
        if (s[j] === '\\') {
          const escaped = s[j + 1];
          if (escaped === undefined) return undefined;
          out += escaped === '"' || escaped === '\\' ? escaped : `\\${escaped}`;
          j++;
        } else out += s[j];
      }
      if (j >= s.length) return undefined;
      i = j;
    } else if (c === '\\') {
      const escaped = s[i + 1];
      if (escaped === undefined) return undefined;
      // shell-quote counts an escaped `*` or `?` as a glob all the same.
      if (escaped === '*' || escaped === '?') glob = true;
      out += escaped;
      i++;
    } else if (ENDS_WORD.has(c)) break;
    else {
      if (c === '*' || c === '?') glob = true;
      out += c;
    }
  }
  return { entry: glob ? { op: 'glob', pattern: out } : out, end: i };
}

/** shell-quote's entries for `s`, or undefined when `s` has something only shell-quote reads. */
export function quickTokens(s: string): Entry[] | undefined {
  if (!modelled(s)) return undefined;
  const entries: Entry[] = [];
  let i = 0;
  while (i < s.length) {
    const code = s.charCodeAt(i);
    if (code === SPACE || code === TAB) {
      i++;
      continue;
    }
    const op = operatorAt(s, i);
    if (op !== undefined) {
      entries.push({ op } as Entry);
      i += op.length;
      continue;
    }
    const word = wordAt(s, i);
    if (!word) return undefined;
    entries.push(word.entry);
    i = word.end;
  }
  return entries;
}
