// Bash's pattern matching for one path segment (no `/`), as filename expansion uses it: `*`, `?`,
// bracket expressions with `!`/`^`, ranges (ASCII, as globasciiranges does) and POSIX classes,
// backslash escapes; extglob off. Shared by the real expansion and the judgement of patterns.

const CLASSES: Record<string, string> = {
  alpha: 'a-zA-Z',
  digit: '0-9',
  alnum: 'a-zA-Z0-9',
  upper: 'A-Z',
  lower: 'a-z',
  space: ' \\t\\n\\r\\f\\v',
  blank: ' \\t',
  punct: '!-\\/:-@\\[-`{-~',
  xdigit: '0-9A-Fa-f',
  cntrl: '\\x00-\\x1f\\x7f',
  print: ' -~',
  graph: '!-~',
  word: '\\w',
};

/** One piece of a segment: a literal character, `*`, `?`, or a bracket expression's JS class. */
export type GlobPart =
  | { kind: 'char'; char: string }
  | { kind: 'star' }
  | { kind: 'any' }
  | { kind: 'set'; source: string; negated: boolean; members: number };

/** True if the text has a character the shell would glob on: `*`, `?`, or a closed `[…]`. */
export function hasGlob(text: string): boolean {
  if (text.includes('*') || text.includes('?')) return true;
  const open = text.indexOf('[');
  return open >= 0 && text.indexOf(']', open + 2) > open;
}

/**
 * The segment as parts; a `[` with no closing `]` is a literal character, as in bash. `loose`
 * reads it as dash does, where an unterminated `[:`, `[=` or `[.` is plain members of the set.
 */
export function globParts(segment: string, loose = false): GlobPart[] {
  const parts: GlobPart[] = [];
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] as string;
    if (c === '\\' && i + 1 < segment.length) parts.push({ kind: 'char', char: segment[++i] as string });
    else if (c === '*') {
      if (parts.at(-1)?.kind !== 'star') parts.push({ kind: 'star' });
    } else if (c === '?') parts.push({ kind: 'any' });
    else if (c === '[') {
      const set = bracket(segment, i, loose);
      if (set) {
        parts.push(set.part);
        i = set.end;
      } else parts.push({ kind: 'char', char: c });
    } else parts.push({ kind: 'char', char: c });
  }
  return parts;
}

const escapeClass = (c: string) => (/[\\\]^[-]/.test(c) ? `\\${c}` : c);

/** A bracket expression starting at `start`, or undefined if it never closes. */
function bracket(s: string, start: number, loose: boolean): { part: GlobPart; end: number } | undefined {
  let i = start + 1;
  const negated = s[i] === '!' || s[i] === '^';
  if (negated) i++;
  let source = '';
  let members = 0;
  let first = true;
  for (; i < s.length; i++) {
    let c = s[i] as string;
    if (c === ']' && !first) return { part: { kind: 'set', source, negated, members }, end: i };
    first = false;
    if (c === '[' && (s[i + 1] === ':' || s[i + 1] === '=' || s[i + 1] === '.')) {
      const kind = s[i + 1] as string;
      const close = s.indexOf(`${kind}]`, i + 2);
      if (close > 0) {
        const name = s.slice(i + 2, close);
        if (kind === ':') source += CLASSES[name] ?? '\\s\\S';
        else source += [...name].map(escapeClass).join('');
        members += kind === ':' ? 26 : 1;
        i = close + 1;
        continue;
      }
      // An unterminated `[:`, `[=` or `[.` makes the whole bracket literal text in bash.
      if (!loose) return undefined;
    }
    if (c === '\\' && i + 1 < s.length) c = s[++i] as string;
    if (s[i + 1] === '-' && s[i + 2] !== undefined && s[i + 2] !== ']') {
      let hi = s[i + 2] as string;
      let skip = 2;
      if (hi === '\\' && s[i + 3] !== undefined) {
        hi = s[i + 3] as string;
        skip = 3;
      }
      if (c <= hi) {
        source += `${escapeClass(c)}-${escapeClass(hi)}`;
        members += hi.charCodeAt(0) - c.charCodeAt(0) + 1;
      }
      i += skip;
      continue;
    }
    source += escapeClass(c);
    members++;
  }
  return undefined;
}

function partSource(part: GlobPart): string {
  switch (part.kind) {
    case 'char':
      return part.char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    case 'star':
      return '[^/]*';
    case 'any':
      return '[^/]';
    case 'set':
      if (part.source === '') return part.negated ? '[^/]' : '(?!)';
      return part.negated ? `[^/${part.source}]` : `[${part.source}]`;
  }
}

/** The segment as an anchored regex; `caseless` for judging secret names. */
export function segmentRegex(segment: string | GlobPart[], caseless = false): RegExp {
  const parts = typeof segment === 'string' ? globParts(segment) : segment;
  return new RegExp(`^${parts.map(partSource).join('')}$`, caseless ? 'is' : 's');
}

/** The segment starts with a literal dot, so (dotglob off) it may match dot-names. */
export const startsWithDot = (parts: GlobPart[]): boolean =>
  parts[0]?.kind === 'char' && parts[0].char === '.';

/** Whether a name is matched as filename expansion matches it: a leading dot only by a literal dot. */
export function nameMatches(parts: GlobPart[], regex: RegExp, name: string): boolean {
  if (name.startsWith('.') && !startsWithDot(parts)) return false;
  return regex.test(name);
}

/**
 * The segment could match `.` or `..` in a shell without globskipdots (dash, bash before 5.2):
 * `.?`, `.*`, `.[.]`, `.[!a]`, `.[[:punct:]]`.
 */
export function couldMatchDots(parts: GlobPart[]): boolean {
  if (!startsWithDot(parts)) return false;
  const regex = segmentRegex(parts);
  return regex.test('.') || regex.test('..');
}

/**
 * Nothing in the segment names a particular file: only wildcards, broad sets and dots
 * (`.[!.]*`, `.??*`, `*.*`). Such a listing pattern is judged by what it matches now;
 * a pattern with letters in it (`.e*`, `*.pem`, `id_*`) is judged by what it could match.
 */
export function isGeneric(parts: GlobPart[]): boolean {
  return parts.every(
    (p) =>
      p.kind === 'star' ||
      p.kind === 'any' ||
      (p.kind === 'char' && p.char === '.') ||
      (p.kind === 'set' && (p.negated || p.members >= 10)),
  );
}
