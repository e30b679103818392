// Bash's pattern matching for one path segment (no `/`), as filename expansion uses it: `*`, `?`,
// bracket expressions with `!`/`^`, ranges (ASCII, as globasciiranges does) and POSIX classes,
// backslash escapes; extglob off. Shared by the real expansion and the judgement of patterns.
// A direct matcher, not a RegExp: patterns are judged once each, so compiling would cost more.

type Range = readonly [number, number];
const r = (a: string, b: string): Range => [a.charCodeAt(0), b.charCodeAt(0)];

const CLASSES: Record<string, Range[]> = {
  alpha: [r('a', 'z'), r('A', 'Z')],
  digit: [r('0', '9')],
  alnum: [r('a', 'z'), r('A', 'Z'), r('0', '9')],
  upper: [r('A', 'Z')],
  lower: [r('a', 'z')],
  space: [r(' ', ' '), [9, 13]],
  blank: [r(' ', ' '), [9, 9]],
  punct: [r('!', '/'), r(':', '@'), r('[', '`'), r('{', '~')],
  xdigit: [r('0', '9'), r('a', 'f'), r('A', 'F')],
  cntrl: [
    [0, 31],
    [127, 127],
  ],
  print: [r(' ', '~')],
  graph: [r('!', '~')],
  word: [r('a', 'z'), r('A', 'Z'), r('0', '9'), r('_', '_')],
};
/** An unknown class name: judged as matching anything (the stricter reading). */
const ANYTHING: Range[] = [[0, 0x10ffff]];

/** One piece of a segment: a literal character, `*`, `?`, or a bracket expression. */
export type GlobPart =
  | { kind: 'char'; char: string }
  | { kind: 'star' }
  | { kind: 'any' }
  | { kind: 'set'; ranges: Range[]; negated: boolean; members: number };

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

/** A bracket expression starting at `start`, or undefined if it never closes. */
function bracket(s: string, start: number, loose: boolean): { part: GlobPart; end: number } | undefined {
  let i = start + 1;
  const negated = s[i] === '!' || s[i] === '^';
  if (negated) i++;
  const ranges: Range[] = [];
  let members = 0;
  let first = true;
  for (; i < s.length; i++) {
    let c = s[i] as string;
    if (c === ']' && !first) return { part: { kind: 'set', ranges, negated, members }, end: i };
    first = false;
    if (c === '[' && (s[i + 1] === ':' || s[i + 1] === '=' || s[i + 1] === '.')) {
      const kind = s[i + 1] as string;
      const close = s.indexOf(`${kind}]`, i + 2);
      if (close > 0) {
        const name = s.slice(i + 2, close);
        if (kind === ':') ranges.push(...(CLASSES[name] ?? ANYTHING));
        else for (const ch of name) ranges.push(r(ch, ch));
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
      // A reversed range matches nothing, as in bash.
      if (c <= hi) {
        ranges.push(r(c, hi));
        members += hi.charCodeAt(0) - c.charCodeAt(0) + 1;
      }
      i += skip;
      continue;
    }
    ranges.push(r(c, c));
    members++;
  }
  return undefined;
}

const inRanges = (ranges: Range[], code: number) => ranges.some(([lo, hi]) => code >= lo && code <= hi);

function matchesOne(part: GlobPart, ch: string, caseless: boolean): boolean {
  switch (part.kind) {
    case 'char':
      return part.char === ch || (caseless && part.char.toLowerCase() === ch.toLowerCase());
    case 'any':
      return ch !== '/';
    case 'star':
      return true;
    case 'set': {
      if (ch === '/') return false;
      let hit = inRanges(part.ranges, ch.charCodeAt(0));
      if (!hit && caseless) {
        const other = ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase();
        hit = inRanges(part.ranges, other.charCodeAt(0));
      }
      return hit !== part.negated;
    }
  }
}

/** Whether the whole name matches; `*` backtracks to the last star only (enough for globs). */
export function partsMatch(parts: GlobPart[], name: string, caseless = false): boolean {
  let p = 0;
  let n = 0;
  let starP = -1;
  let starN = 0;
  while (n < name.length) {
    const part = parts[p];
    if (part?.kind === 'star') {
      starP = p++;
      starN = n;
    } else if (part && matchesOne(part, name[n] as string, caseless)) {
      p++;
      n++;
    } else if (starP >= 0) {
      p = starP + 1;
      n = ++starN;
    } else return false;
  }
  while (parts[p]?.kind === 'star') p++;
  return p === parts.length;
}

/**
 * A test for many names against one segment, as filename expansion matches (a leading dot only
 * by a literal dot): the literal head and tail are checked first, which rules most names out.
 */
export function nameMatcher(
  parts: GlobPart[],
  caseless = false,
  lowerNames = false,
): (name: string) => boolean {
  const dotted = startsWithDot(parts);
  const fold = (text: string) => (caseless ? text.toLowerCase() : text);
  const foldName = lowerNames ? (text: string) => text : fold;
  let head = '';
  for (const part of parts) {
    if (part.kind !== 'char') break;
    head += part.char;
  }
  let tail = '';
  for (let k = parts.length - 1; k >= head.length; k--) {
    const part = parts[k] as GlobPart;
    if (part.kind !== 'char') break;
    tail = part.char + tail;
  }
  head = fold(head);
  tail = fold(tail);
  return (name) => {
    if (name.startsWith('.') && !dotted) return false;
    const folded = foldName(name);
    if (!folded.startsWith(head) || !folded.endsWith(tail)) return false;
    return partsMatch(parts, name, caseless);
  };
}

/** The segment starts with a literal dot, so (dotglob off) it may match dot-names. */
export const startsWithDot = (parts: GlobPart[]): boolean =>
  parts[0]?.kind === 'char' && parts[0].char === '.';

/** Whether a name is matched as filename expansion matches it: a leading dot only by a literal dot. */
export function nameMatches(parts: GlobPart[], name: string, caseless = false): boolean {
  if (name.startsWith('.') && !startsWithDot(parts)) return false;
  return partsMatch(parts, name, caseless);
}

/**
 * The segment could match `.` or `..` in a shell without globskipdots (dash, bash before 5.2):
 * `.?`, `.*`, `.[.]`, `.[!a]`, `.[[:punct:]]`.
 */
export function couldMatchDots(parts: GlobPart[]): boolean {
  return startsWithDot(parts) && (partsMatch(parts, '.') || partsMatch(parts, '..'));
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
