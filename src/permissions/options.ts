// Option parsing the way each program reads its own argv: short clusters (-qO file, -ofile),
// `--opt=value` and `--opt value`, GNU unique prefixes, and `--`. A rule declares its options in
// an OptionTable; an option that is not in the table is reported as unknown, never skipped, so a
// rule can refuse what it does not model.

/** How an option takes a value: not at all, always (attached or the next word), or only attached. */
export type Arity = 'flag' | 'value' | 'optional' | 'two';

export interface OptionTable {
  /** Short letter → canonical name (a long name, or the letter itself when there is none). */
  short?: Record<string, string>;
  /** Canonical long name → how it takes a value. Short letters' canonical names must be here too. */
  long: Record<string, Arity>;
  /** Long options may be abbreviated to a unique prefix (GNU getopt_long). */
  abbreviate?: boolean;
  /** Long options use one dash (`find -name`, `openssl -out`); `--name` is accepted too. */
  singleDash?: boolean;
  /** Options may follow operands (GNU permutation); false stops at the first operand (POSIX, wrappers). */
  permute?: boolean;
}

export interface ParsedOption {
  /** The canonical name, or the raw word when unknown. */
  name: string;
  value?: string;
  /** Extra value of a `two` option (jq --arg NAME VALUE). */
  value2?: string;
  /** The word the option came from. */
  raw: string;
}

export interface ParsedArgs {
  options: ParsedOption[];
  operands: string[];
  /** Words that look like options but that the table does not know (or abbreviate ambiguously). */
  unknown: string[];
  /** Index in args of the first operand when `permute` is false (the wrapped command). */
  rest: number;
}

/** The canonical long name a written name stands for, or undefined if none or ambiguous. */
export function resolveLong(table: OptionTable, written: string): string | undefined {
  if (Object.hasOwn(table.long, written)) return written;
  if (!table.abbreviate || written === '') return undefined;
  const matches = Object.keys(table.long).filter((l) => l.startsWith(written));
  return matches.length === 1 ? matches[0] : undefined;
}

export function parseArgs(args: readonly string[], table: OptionTable): ParsedArgs {
  const permute = table.permute ?? true;
  // Most commands carry few options or none: skip the walk when no word can be one.
  if (!args.some((a) => a.length > 1 && a[0] === '-'))
    return { options: [], operands: [...args], unknown: [], rest: permute ? args.length : 0 };
  const out: ParsedArgs = { options: [], operands: [], unknown: [], rest: args.length };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      out.operands.push(...args.slice(i + 1));
      if (!permute) out.rest = i + 1;
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      if (!permute) {
        out.rest = i;
        out.operands.push(...args.slice(i));
        break;
      }
      out.operands.push(a);
      continue;
    }
    const isLong = a.startsWith('--') || (table.singleDash === true && a.length > 2);
    const consumed = isLong ? longOption(args, i, table, out) : shortCluster(args, i, table, out);
    i += consumed;
  }
  return out;
}

/** Parses one long option at args[i]; returns how many extra words it consumed. */
function longOption(args: readonly string[], i: number, table: OptionTable, out: ParsedArgs): number {
  const a = args[i] as string;
  const body = a.replace(/^--?/, '');
  const eq = body.indexOf('=');
  const written = eq >= 0 ? body.slice(0, eq) : body;
  const name = resolveLong(table, written);
  if (name === undefined) {
    // A single-dash table may still hold short letters (`openssl -v`? no: `find -H`).
    if (table.singleDash && !a.startsWith('--') && table.short) return shortCluster(args, i, table, out);
    out.unknown.push(a);
    out.options.push({ name: a, raw: a });
    return 0;
  }
  const arity = table.long[name] as Arity;
  if (eq >= 0) {
    if (arity === 'flag') {
      out.unknown.push(a);
      out.options.push({ name, raw: a });
      return 0;
    }
    const value = body.slice(eq + 1);
    if (arity === 'two') {
      out.options.push({ name, value, value2: args[i + 1], raw: a });
      return 1;
    }
    out.options.push({ name, value, raw: a });
    return 0;
  }
  if (arity === 'value') {
    out.options.push(valued(name, args[i + 1], a));
    return 1;
  }
  if (arity === 'two') {
    out.options.push({ name, value: args[i + 1], value2: args[i + 2], raw: a });
    return 2;
  }
  out.options.push({ name, raw: a });
  return 0;
}

const valued = (name: string, value: string | undefined, raw: string): ParsedOption =>
  value === undefined ? { name, raw } : { name, value, raw };

/** Parses a short cluster at args[i] (`-qO`, `-ofile`, `-n5`); returns the extra words consumed. */
function shortCluster(args: readonly string[], i: number, table: OptionTable, out: ParsedArgs): number {
  const a = args[i] as string;
  for (let j = 1; j < a.length; j++) {
    const letter = a[j] as string;
    const name = table.short && Object.hasOwn(table.short, letter) ? table.short[letter] : undefined;
    if (name === undefined || !Object.hasOwn(table.long, name)) {
      out.unknown.push(`-${letter}`);
      out.options.push({ name: `-${letter}`, raw: a });
      continue;
    }
    const arity = table.long[name] as Arity;
    if (arity === 'flag') {
      out.options.push({ name, raw: a });
      continue;
    }
    const attached = a.slice(j + 1);
    if (arity === 'two' && attached !== '') {
      out.options.push({ name, value: attached, value2: args[i + 1], raw: a });
      return 1;
    }
    if (attached !== '' || arity === 'optional') {
      out.options.push(attached === '' ? { name, raw: a } : { name, value: attached, raw: a });
      return 0;
    }
    if (arity === 'two') {
      out.options.push({ name, value: args[i + 1], value2: args[i + 2], raw: a });
      return 2;
    }
    out.options.push(valued(name, args[i + 1], a));
    return 1;
  }
  return 0;
}

/** Short letters as a table: `letters('abc')` maps each letter to itself as a flag. */
export function letters(flags: string, valuedLetters = ''): Pick<OptionTable, 'short' | 'long'> {
  const short: Record<string, string> = {};
  const long: Record<string, Arity> = {};
  for (const c of flags) {
    short[c] = c;
    long[c] = 'flag';
  }
  for (const c of valuedLetters) {
    short[c] = c;
    long[c] = 'value';
  }
  return { short, long };
}

/** The first option whose canonical name is in `names`. */
export const findOption = (parsed: ParsedArgs, names: ReadonlySet<string> | readonly string[]) => {
  const has = (n: string) => ('has' in names ? names.has(n) : names.includes(n));
  return parsed.options.find((o) => has(o.name));
};

/** How an option was written, for a reason line: `--output-document`, `-O`. */
export const shown = (option: ParsedOption): string =>
  option.raw.startsWith('--') ? (option.raw.split('=')[0] as string) : option.raw;

/** `shortNames('o=output q=quiet')`: short letters and their canonical names, compactly. */
export const shortNames = (spec: string): Record<string, string> =>
  Object.fromEntries(
    spec
      .trim()
      .split(/\s+/)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );

/** Long names that take no value, from a space-separated list. */
export const flags = (names: string): Record<string, Arity> =>
  Object.fromEntries(
    names
      .trim()
      .split(/\s+/)
      .map((n) => [n, 'flag' as Arity]),
  );

/** Long names that take a value, from a space-separated list. */
export const values = (names: string): Record<string, Arity> =>
  Object.fromEntries(
    names
      .trim()
      .split(/\s+/)
      .map((n) => [n, 'value' as Arity]),
  );
