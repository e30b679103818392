// Constructs whose meaning differs between the shells a command might run in (bash, dash/sh), or
// that change how bash itself expands words after the guard has judged them. The classifier reads
// bash; where another shell would split, open or run something else, or where the command turns
// on expansion options the guard assumes off, the command always asks (score 3).
//
// Not listed, because every shell that differs refuses them as a syntax error (dash: `|&`, `<<<`,
// `;;&`, `((…))`) or because the bash reading is already the stricter one the classifier and guard
// use (`{a,b}` braces: the guard judges the expansion; `**`: globstar is off, so it is `*`).
import type { Classification } from './classify-shell.ts';

/** A superset of what the scan below finds: most commands have none of it. */
const TRIGGER_CHAR = /[$&([]|shopt/;
const TRIGGER = /\$['"[{]|&>|[<>]\(|[@!+*?]\(|shopt|\[[^\]]*(?:\$\(|`)/;

/** Phrases for each construct found, in order, each once. Pure; linear in the command. */
export function dialectHazards(command: string): string[] {
  // Every construct below needs one of these: most commands are answered by one scan.
  if (!TRIGGER_CHAR.test(command) || !TRIGGER.test(command)) return [];
  const found = new Set<string>();
  const n = command.length;
  let i = 0;
  let wordStart = true;
  while (i < n) {
    const c = command[i] as string;
    const next = command[i + 1];
    if (c === '\\') {
      i += 2;
      wordStart = false;
    } else if (c === "'") {
      const close = command.indexOf("'", i + 1);
      const end = close < 0 ? n : close;
      subscriptRun(command.slice(i + 1, end), found);
      i = end + 1;
      wordStart = false;
    } else if (c === '"') {
      i = skipDouble(command, i + 1, found);
      wordStart = false;
    } else if (c === '$' && next === "'") {
      i = ansiC(command, i + 2, found);
      wordStart = false;
    } else if (c === '$' && next === '"') {
      found.add('$"…" locale quoting (other shells keep the $)');
      i++;
    } else if (c === '$' && next === '[') {
      found.add('$[…] arithmetic (other shells keep it as text; bash evaluates names in it)');
      i += 2;
    } else if (
      (c === '$' && next === '(' && command[i + 2] === '(') ||
      (wordStart && c === '(' && next === '(')
    ) {
      // Arithmetic: `*(` there is multiplication, not a glob.
      i = pastParens(command, command.indexOf('(', i));
      wordStart = false;
    } else if (c === '$' && next === '{') {
      i = braced(command, i + 2, found);
      wordStart = false;
    } else if (c === '&' && next === '>') {
      if (wordsAfterTarget(command, i + (command[i + 2] === '>' ? 3 : 2))) {
        found.add('&> followed by more words (other shells run them as a command of their own)');
      }
      i += 2;
    } else if ((c === '<' || c === '>') && next === '(') {
      found.add('process substitution <(…) / >(…)');
      i += 2;
    } else if ('@!+*?'.includes(c) && next === '(') {
      found.add(`extended glob ${c}(…)`);
      i += 2;
    } else if (wordStart && command.startsWith('shopt', i) && /^shopt\b/.test(command.slice(i, i + 6))) {
      found.add('shopt changes how the shell expands words');
      i += 5;
      wordStart = false;
    } else {
      wordStart = c === ' ' || c === '\t' || c === '\n' || c === ';' || c === '&' || c === '|' || c === '(';
      i++;
    }
  }
  return [...found];
}

/** `$'…'`: bash ends it at an unescaped quote, other shells at the first quote. */
function ansiC(s: string, start: number, found: Set<string>): number {
  let k = start;
  while (k < s.length && s[k] !== "'") {
    if (s[k] === '\\' && s[k + 1] === "'")
      found.add("$'…' with an escaped quote (other shells end the quote there)");
    k += s[k] === '\\' ? 2 : 1;
  }
  subscriptRun(s.slice(start, k), found);
  return k + 1;
}

/** Past the parenthesis that closes the one at `open`. */
function pastParens(s: string, open: number): number {
  let depth = 0;
  for (let k = open; k < s.length; k++) {
    if (s[k] === '(') depth++;
    else if (s[k] === ')' && --depth === 0) return k + 1;
  }
  return s.length;
}

function skipDouble(s: string, start: number, found: Set<string>): number {
  let k = start;
  while (k < s.length && s[k] !== '"') {
    if (s[k] === '$' && s[k + 1] === '{') braced(s, k + 2, found);
    k += s[k] === '\\' ? 2 : 1;
  }
  return k + 1;
}

/** Quoted `a[$(cmd)]`: bash runs cmd wherever the value is later used as arithmetic. */
function subscriptRun(text: string, found: Set<string>): void {
  if (/\[[^\]]*(?:\$\(|`)/.test(text)) {
    found.add(
      'a quoted array subscript with a command in it (bash runs it when the value is used as a number)',
    );
  }
}

/** `${name:offset}` and `${name[index]}` with names in them: bash evaluates those as arithmetic. */
function braced(s: string, start: number, found: Set<string>): number {
  const close = s.indexOf('}', start);
  const body = s.slice(start, close < 0 ? s.length : close);
  if (/^[A-Za-z_][A-Za-z0-9_]*(?::(?![-=?+])|\[)[^}]*[A-Za-z_$]/.test(body)) {
    found.add(`\${…} with an offset or index that names a variable (bash evaluates it as arithmetic)`);
  }
  return start;
}

/** After `&>`, the target word and then another word before the command ends. */
function wordsAfterTarget(s: string, start: number): boolean {
  let k = start;
  while (s[k] === ' ' || s[k] === '\t') k++;
  while (k < s.length && !/[\s;&|()<>]/.test(s[k] as string)) k += s[k] === '\\' ? 2 : 1;
  while (s[k] === ' ' || s[k] === '\t') k++;
  return k < s.length && !/[;&|()\n#]/.test(s[k] as string);
}

/** The classification, raised to 3 (always asks) when the command has a dialect hazard. */
export function withDialectHazards(classification: Classification, command: string): Classification {
  if (classification.score >= 3) return classification;
  const hazards = dialectHazards(command);
  if (hazards.length === 0) return classification;
  return { ...classification, score: 3, reason: `shells differ on this command: ${hazards.join('; ')}` };
}
