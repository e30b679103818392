// Lexing shared by the mini-language rules (sed, awk): POSIX bracket expressions, where a `/`
// or `]` does not mean what it means outside.

/** Where a bracket expression starting at s[at] === '[' ends (index after `]`), or -1. */
export function bracketEnd(s: string, at: number): number {
  let i = at + 1;
  if (s[i] === '^') i++;
  if (s[i] === ']') i++;
  while (i < s.length) {
    const c = s[i];
    if (c === '[' && (s[i + 1] === ':' || s[i + 1] === '=' || s[i + 1] === '.')) {
      const close = s.indexOf(`${s[i + 1]}]`, i + 2);
      if (close < 0) return -1;
      i = close + 2;
      continue;
    }
    if (c === ']') return i + 1;
    i++;
  }
  return -1;
}

/** The reason for a program text that a variable or substitution builds: it cannot be read. */
export const BUILT = (what: string): string =>
  `the ${what} is built from a variable or substitution the classifier cannot see`;
