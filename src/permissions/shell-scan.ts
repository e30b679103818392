// What shell-quote's parse misses, found in one pass over the raw command before it is parsed:
// newlines as separators, comments, here-documents, command and process substitution (also inside
// double quotes), parameter expansion, $IFS, ANSI-C quoting, brace expansion, line continuations and
// invisible characters. The output is the command rewritten for shell-quote, with markers where the
// shell would expand something (shell-marks.ts), so every later step sees what the shell will see.
import { heredocStart, readHeredocBodies } from './shell-heredoc.ts';
import { ANSI_MARK, BRACE_MARK, type Context, opaque, type Scan, sentinel } from './shell-marks.ts';

type Mode = 'top' | 'paren';

const INVISIBLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u00a0\u00ad\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff]/;
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, 'g');
const NAME_START = /[A-Za-z_]/;
const NAME = /[A-Za-z0-9_]*/y;
const SPECIAL: Record<string, string> = {
  '@': 'at',
  '*': 'star',
  '#': 'count',
  '?': 'status',
  $: 'pid',
  '!': 'bg',
  '-': 'flags',
};
const BRACE_STOP = new Set(['{', "'", '"', '`', '$', ';', '&', '|', '<', '>', '(', ')', '\\']);
const ARITHMETIC = /^\([\d\s+\-*/%<>=!&|^~?:,()]*\)$/;
const ORDINARY = /[^'"\\#\n$`<>{()]+/y;
const WORD_BREAK = new Set([' ', '\t', ';', '&', '|', '(', ')', '<', '>']);

/** Scans a whole command. Only nesting deep enough to exhaust the stack throws (parseCommand catches it). */
export function scanCommand(raw: string): Scan {
  const ctx: Context = { text: '', opaque: [], inner: [], heredocs: [], pending: [] };
  let source = raw;
  const hidden = INVISIBLE.exec(source);
  if (hidden) {
    const code = (hidden[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
    opaque(ctx, `invisible or look-alike character U+${code}`);
    source = source.replace(INVISIBLE_ALL, '?');
  }
  ctx.text = scan(source, 0, 'top', ctx).text;
  return { text: ctx.text, opaque: ctx.opaque, inner: ctx.inner, heredocs: ctx.heredocs };
}

function scan(s: string, start: number, mode: Mode, ctx: Context): { text: string; end: number } {
  let out = '';
  let i = start;
  let depth = 0;
  let wordStart = true;
  const n = s.length;
  while (i < n) {
    const c = s[i] as string;
    if (c === "'") {
      const close = s.indexOf("'", i + 1);
      if (close < 0) {
        opaque(ctx, 'unterminated quote');
        out += `${s.slice(i)}'`;
        i = n;
      } else {
        out += s.slice(i, close + 1);
        i = close + 1;
      }
      wordStart = false;
    } else if (c === '"') {
      const r = scanDouble(s, i + 1, ctx);
      out += r.text;
      i = r.end;
      wordStart = false;
    } else if (c === '\\') {
      const next = s[i + 1];
      if (next === '\n') opaque(ctx, 'line continuation');
      else if (next !== undefined) out += `\\${next}`;
      i += 2;
      wordStart = false;
    } else if (c === '#' && wordStart) {
      const eol = s.indexOf('\n', i);
      i = eol < 0 ? n : eol;
    } else if (c === '#') {
      out += '\\#';
      i++;
    } else if (c === '\n') {
      i = readHeredocBodies(s, i + 1, ctx);
      out += endsWithPipeOrAnd(out) ? ' ' : ' ; ';
      wordStart = true;
    } else if (c === '$') {
      const r = dollar(s, i, false, ctx);
      out += r.text;
      i = r.end;
      wordStart = r.text === ' ';
    } else if (c === '`') {
      const r = backtick(s, i, ctx);
      out += r.text;
      i = r.end;
      wordStart = false;
    } else if ((c === '<' || c === '>') && s[i + 1] === '(') {
      opaque(ctx, 'process substitution');
      const r = scan(s, i + 2, 'paren', ctx);
      ctx.inner.push(r.text);
      out += ` ${sentinel('!proc')} `;
      i = r.end + 1;
      wordStart = false;
    } else if (c === '<' && s[i + 1] === '<' && s[i + 2] !== '<') {
      const r = heredocStart(s, i, ctx);
      out += r.text;
      i = r.end;
      wordStart = true;
    } else if (c === '{' && braceAt(s, i)) {
      out += `${BRACE_MARK}{`;
      i++;
      wordStart = false;
    } else if (c === '(' && s[i + 1] === '(' && wordStart) {
      opaque(ctx, 'arithmetic command ((…))');
      out += '(';
      i++;
      depth++;
    } else if (mode === 'paren' && c === ')' && depth === 0) {
      return { text: out, end: i };
    } else if (c === '(' || c === ')' || c === '<' || c === '>' || c === '{') {
      if (c === '(') depth++;
      else if (c === ')') depth--;
      out += c;
      i++;
      wordStart = WORD_BREAK.has(c);
    } else {
      // A run of characters that need nothing done, copied at once.
      ORDINARY.lastIndex = i;
      ORDINARY.test(s);
      const end = Math.max(ORDINARY.lastIndex, i + 1);
      out += s.slice(i, end);
      wordStart = WORD_BREAK.has(s[end - 1] as string);
      i = end;
    }
  }
  if (mode === 'paren') opaque(ctx, 'unterminated substitution');
  return { text: out, end: n };
}

function scanDouble(s: string, start: number, ctx: Context): { text: string; end: number } {
  let out = '"';
  let i = start;
  while (i < s.length) {
    const c = s[i] as string;
    if (c === '"') return { text: `${out}"`, end: i + 1 };
    if (c === '\\') {
      const next = s[i + 1];
      if (next === '\n') opaque(ctx, 'line continuation');
      else if (next === '`') out += '`';
      else if (next !== undefined) out += `\\${next}`;
      i += 2;
    } else if (c === '$') {
      const r = dollar(s, i, true, ctx);
      out += r.text;
      i = r.end;
    } else if (c === '`') {
      const r = backtick(s, i, ctx);
      out += r.text;
      i = r.end;
    } else {
      out += c;
      i++;
    }
  }
  opaque(ctx, 'unterminated quote');
  return { text: `${out}"`, end: s.length };
}

/** `$…` at `i`: substitution, expansion or a literal dollar. */
function dollar(s: string, i: number, quoted: boolean, ctx: Context): { text: string; end: number } {
  const next = s[i + 1];
  if (next === '(') {
    if (s[i + 2] === '(') {
      const r = scan(s, i + 2, 'paren', ctx);
      // Numbers and operators only; a name can hold `a[$(cmd)]`, which arithmetic would run.
      if (!ARITHMETIC.test(s.slice(i + 2, r.end))) opaque(ctx, 'arithmetic expansion $((…)) with names');
      return { text: sentinel('!arith'), end: r.end + 1 };
    }
    opaque(ctx, 'command substitution $(…)');
    const r = scan(s, i + 2, 'paren', ctx);
    ctx.inner.push(r.text);
    return { text: sentinel('!cmd'), end: r.end + 1 };
  }
  if (next === '{') return braced(s, i, ctx);
  if (next !== undefined && NAME_START.test(next)) {
    NAME.lastIndex = i + 2;
    NAME.test(s);
    const name = s.slice(i + 1, NAME.lastIndex);
    return { text: name === 'IFS' ? ' ' : sentinel(name), end: NAME.lastIndex };
  }
  if (next !== undefined && next >= '0' && next <= '9') return { text: sentinel(`!${next}`), end: i + 2 };
  const special = next !== undefined && Object.hasOwn(SPECIAL, next) ? SPECIAL[next] : undefined;
  if (special) return { text: sentinel(`!${special}`), end: i + 2 };
  if (next === "'" && !quoted) {
    let k = i + 2;
    while (k < s.length && s[k] !== "'") k += s[k] === '\\' ? 2 : 1;
    if (k >= s.length) {
      opaque(ctx, 'unterminated quote');
      return { text: `${ANSI_MARK}${s.slice(i)}'`, end: s.length };
    }
    return { text: ANSI_MARK + s.slice(i, k + 1), end: k + 1 };
  }
  if (next === '"' && !quoted) return { text: '', end: i + 1 };
  return { text: '\\$', end: i + 1 };
}

/** An unquoted `{` that starts a brace expansion: `,` or `..` before its `}`, no space between. */
function braceAt(s: string, i: number): boolean {
  let marked = false;
  for (let k = i + 1; k < s.length; k++) {
    const c = s[k] as string;
    if (c === '}') return marked;
    if (BRACE_STOP.has(c) || c.trim() === '') return false;
    if (c === ',' || (c === '.' && s[k + 1] === '.')) marked = true;
  }
  return false;
}

/** After a newline, `|`, `&&` or `||` carry on to the next line; anything else ends a command. */
function endsWithPipeOrAnd(out: string): boolean {
  let k = out.length - 1;
  while (k >= 0 && (out[k] === ' ' || out[k] === '\t')) k--;
  return out[k] === '|' || out[k] === '&';
}

/** `${…}`: a plain name, or an operation on one (whose value is then unknown). */
function braced(s: string, i: number, ctx: Context): { text: string; end: number } {
  let depth = 0;
  let k = i + 2;
  for (; k < s.length; k++) {
    const c = s[k];
    if (c === '\\') k++;
    else if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0) break;
      depth--;
    }
  }
  if (k >= s.length) {
    opaque(ctx, `unterminated \${…}`);
    return { text: sentinel('!expr'), end: s.length };
  }
  const body = s.slice(i + 2, k);
  if (body.includes('$(') || body.includes('`')) {
    opaque(ctx, `command substitution inside \${…}`);
    ctx.inner.push(...scanCommand(body).inner);
  }
  const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(body)?.[0];
  if (name === 'IFS') return { text: ' ', end: k + 1 };
  let text: string;
  if (name && name.length === body.length) text = sentinel(name);
  else if (body.startsWith('#')) text = sentinel('!len');
  else if (body.startsWith('!')) {
    opaque(ctx, `indirect expansion \${!…}`);
    text = sentinel('!indirect');
  } else text = sentinel(`!expr:${name ?? ''}`);
  return { text, end: k + 1 };
}

/** `` `…` ``: the old form of command substitution. */
function backtick(s: string, i: number, ctx: Context): { text: string; end: number } {
  opaque(ctx, 'command substitution `…`');
  let k = i + 1;
  while (k < s.length && s[k] !== '`') k += s[k] === '\\' ? 2 : 1;
  const body = s.slice(i + 1, Math.min(k, s.length)).replace(/\\([`\\$])/g, '$1');
  if (k >= s.length) opaque(ctx, 'unterminated substitution');
  const r = scan(body, 0, 'top', ctx);
  ctx.inner.push(r.text);
  return { text: sentinel('!cmd'), end: Math.min(k + 1, s.length) };
}
