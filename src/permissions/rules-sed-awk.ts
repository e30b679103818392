// sed and awk carry programs of their own: read-only unless the program (or a flag) executes
// commands or writes files. sed scripts are parsed command by command; awk programs are searched.
import { type Judgement, judged } from './judgement.ts';

interface SedRisk {
  exec: boolean;
  write: boolean;
  reads: string[];
  unreadable: boolean;
}

/** Walks a sed script: addresses, then one command each, as GNU sed reads them. */
export function sedScriptRisk(script: string): SedRisk {
  const risk: SedRisk = { exec: false, write: false, reads: [], unreadable: false };
  const s = script;
  let i = 0;
  const toEol = () => {
    const start = i;
    while (i < s.length && s[i] !== '\n') i++;
    return s.slice(start, i).trim();
  };
  const delimited = (delim: string) => {
    while (i < s.length && s[i] !== delim) {
      if (s[i] === '\\') i++;
      i++;
    }
    i++;
  };
  const address = () => {
    if (/\d/.test(s[i] ?? '')) {
      while (/[\d~]/.test(s[i] ?? '')) i++;
    } else if (s[i] === '$') i++;
    else if (s[i] === '/' || s[i] === '\\') {
      if (s[i] === '\\') i++;
      const delim = s[i++] as string;
      delimited(delim);
      while (s[i] === 'I' || s[i] === 'M') i++;
    }
  };
  while (i < s.length) {
    while (i < s.length && /[\s;]/.test(s[i] as string)) i++;
    if (i >= s.length) break;
    if (s[i] === '#') {
      toEol();
      continue;
    }
    address();
    if (s[i] === ',') {
      i++;
      if (s[i] === '+' || s[i] === '~') i++;
      address();
    }
    while (s[i] === ' ' || s[i] === '!') i++;
    const c = s[i++];
    if (c === undefined) break;
    if ('{}=dDgGhHnNpPxzF'.includes(c)) continue;
    if (c === 's' || c === 'y') {
      const delim = s[i++];
      if (delim === undefined || delim === '\n' || delim === '\\') {
        risk.unreadable = true;
        break;
      }
      delimited(delim);
      delimited(delim);
      if (c === 'y') continue;
      while (i < s.length && /[gpiImMe0-9w]/.test(s[i] as string)) {
        if (s[i] === 'e') risk.exec = true;
        if (s[i] === 'w') {
          risk.write = true;
          i++;
          toEol();
          break;
        }
        i++;
      }
    } else if ('aic'.includes(c)) {
      while (i < s.length && s[i] !== '\n') i += s[i] === '\\' ? 2 : 1;
    } else if (c === 'r' || c === 'R') risk.reads.push(toEol());
    else if (c === 'w' || c === 'W') {
      risk.write = true;
      toEol();
    } else if (c === 'e') {
      risk.exec = true;
      toEol();
    } else if (c === ':' || c === 'b' || c === 't' || c === 'T') {
      while (i < s.length && !/[;\n}]/.test(s[i] as string)) i++;
    } else if ('qQlLv'.includes(c)) {
      while (/[\d ]/.test(s[i] ?? '')) i++;
    } else {
      risk.unreadable = true;
      break;
    }
  }
  return risk;
}

const SED_LONG = [
  'expression',
  'file',
  'in-place',
  'line-length',
  'null-data',
  'zero-terminated',
  'posix',
  'quiet',
];

export function sedRule(args: string[]): Judgement {
  const scripts: string[] = [];
  const positional: string[] = [];
  let inPlace = false;
  let scriptFile = false;
  for (let k = 0; k < args.length; k++) {
    const a = args[k] as string;
    if (a === '--') {
      positional.push(...args.slice(k + 1));
      break;
    }
    if (a.startsWith('--')) {
      const [name = '', value] = a.slice(2).split(/=(.*)/s);
      const full = SED_LONG.filter((l) => l.startsWith(name));
      if (full.includes('in-place') && (full.length === 1 || name === 'in-place' || name === 'i'))
        inPlace = true;
      else if (full[0] === 'expression') scripts.push(value ?? args[++k] ?? '');
      else if (full[0] === 'file') scriptFile = true;
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const f = a[j];
        if (f === 'i') {
          inPlace = true;
          break;
        }
        if (f === 'e') {
          scripts.push(a.slice(j + 1) || (args[++k] ?? ''));
          break;
        }
        if (f === 'f') {
          scriptFile = true;
          break;
        }
        if (f === 'l') {
          if (j === a.length - 1) k++;
          break;
        }
      }
      continue;
    }
    positional.push(a);
  }
  if (scriptFile) return judged(3, 'sed -f runs a script file the classifier cannot read');
  if (scripts.length === 0 && positional.length > 0) scripts.push(positional.shift() as string);
  const reads: string[] = [];
  for (const script of scripts) {
    if (script.length > MAX_PROGRAM) return judged(3, 'sed script too long to read');
    const risk = sedScriptRisk(script);
    if (risk.exec) return judged(3, 'sed runs shell commands (the e command or flag)');
    if (risk.write) return judged(3, 'sed writes files (the w command or flag)');
    if (risk.unreadable) return judged(3, 'sed script the classifier cannot read');
    reads.push(...risk.reads);
  }
  const extra = reads.length > 0 ? { paths: reads } : {};
  if (inPlace) return judged(2, 'sed -i edits files in place', extra);
  return judged(0, 'sed only prints', extra);
}

const MAX_PROGRAM = 8192;
/** `getline < "file"` (or `getline var < "file"`): the literal is judged as a path. */
const GETLINE_FROM = /\bgetline\b\s*(?:[A-Za-z_][\w]*\s*)?<\s*("(?:\\.|[^"\\])*")?/g;
/** awk options whose argument is the next word. */
const AWK_VALUE = new Set(['-F', '-v', '-f', '-e', '-E', '-i', '-l', '-W']);
const AWK_DANGER_LONG = ['file', 'exec', 'include', 'load', 'pretty-print', 'profile', 'dump-variables'];

export function awkRule(args: string[]): Judgement {
  const programs: string[] = [];
  const positional: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const a = args[k] as string;
    if (a === '--') {
      positional.push(...args.slice(k + 1));
      break;
    }
    if (a.startsWith('--')) {
      const [name = '', value] = a.slice(2).split(/=(.*)/s);
      if (name !== '' && AWK_DANGER_LONG.some((l) => l.startsWith(name))) {
        return judged(3, `awk ${a.split('=')[0]} loads code or writes files`);
      }
      if (name !== '' && 'source'.startsWith(name)) programs.push(value ?? args[++k] ?? '');
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      const flag = a.slice(0, 2);
      if (flag === '-f' || flag === '-E' || flag === '-i' || flag === '-l') {
        return judged(3, `awk ${flag} loads a program file the classifier cannot read`);
      }
      if (flag === '-o' || flag === '-p' || flag === '-d') return judged(3, `awk ${flag} writes a file`);
      if (flag === '-e') programs.push(a.slice(2) || (args[++k] ?? ''));
      else if (AWK_VALUE.has(flag) && a.length === 2) k++;
      continue;
    }
    positional.push(a);
  }
  if (programs.length === 0) programs.push(positional[0] ?? '');
  const paths: string[] = [];
  for (const program of programs) {
    if (program.length > MAX_PROGRAM) return judged(3, 'awk program too long to read');
    for (const m of program.matchAll(GETLINE_FROM)) {
      if (m[1] === undefined) return judged(3, 'awk reads a file named by an expression');
      paths.push(m[1].slice(1, -1).replace(/\\(.)/g, '$1'));
    }
    const code = program.replace(/"(?:\\.|[^"\\])*"/g, '""');
    if (/\bsystem\s*\(/.test(code)) return judged(3, 'awk runs shell commands with system()');
    if (/\|/.test(code.replace(/\|\|/g, ''))) return judged(3, 'awk pipes to or from a shell command');
    if (/\bprintf?\b[^;{}\n]*>/.test(code)) return judged(3, 'awk writes a file with > or >>');
  }
  return judged(
    0,
    paths.length > 0 ? 'awk reads files with getline' : 'awk only prints',
    paths.length > 0 ? { paths } : {},
  );
}
