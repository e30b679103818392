// Which arguments of grep-like tools are their pattern or program (text the guard does not judge as
// a path), read option by option, clusters included: in `grep -rf .env .`, `.env` is the value of
// -f (a file), not the pattern.

/** Value-taking short options of the pattern-first tools, so the pattern is found. */
interface PatternSpec {
  valued: string;
  pattern: string;
  file: string;
}
const GREP: PatternSpec = { valued: 'efmABCdD', pattern: 'e', file: 'f' };
const AWK: PatternSpec = { valued: 'Fvfe', pattern: 'e', file: 'f' };
const SED: PatternSpec = { valued: 'efl', pattern: 'e', file: 'f' };
const PATTERN_FIRST: Record<string, PatternSpec> = {
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  zgrep: GREP,
  ag: GREP,
  ack: GREP,
  rg: { valued: 'efgmABCtTMrjEd', pattern: 'e', file: 'f' },
  sed: SED,
  gsed: SED,
  awk: AWK,
  gawk: AWK,
  mawk: AWK,
  nawk: AWK,
  jq: { valued: 'fL', pattern: '', file: 'f' },
};

/** Commands whose arguments are text, never paths they open. */
const TEXT_ARGS = new Set(['echo', 'printf', 'tr', 'seq', 'sleep', 'true', 'false', ':', 'expr', 'basename']);
const NONE: ReadonlySet<number> = new Set();
/** Every index: all of echo's arguments are text (answered without building a set). */
const EVERY: Pick<ReadonlySet<number>, 'has'> = { has: () => true };

/**
 * Indexes of arguments that are text, not paths: everything for echo-like commands; for grep,
 * rg, sed, awk and jq their pattern or program (the first operand, or the values of -e).
 */
export function textWords(program: string, args: string[]): Pick<ReadonlySet<number>, 'has'> {
  if (TEXT_ARGS.has(program)) return EVERY;
  const spec = Object.hasOwn(PATTERN_FIRST, program) ? PATTERN_FIRST[program] : undefined;
  if (!spec) return NONE;
  const out = new Set<number>();
  let explicit = false;
  for (let k = 0; k < args.length; k++) {
    const a = args[k] as string;
    if (a === '--') {
      if (!explicit && k + 1 < args.length) out.add(k + 1);
      return out;
    }
    if (/^--(?:regexp|expression|source)=/.test(a)) {
      explicit = true;
      out.add(k);
    } else if (/^--(?:regexp|expression|source)$/.test(a)) {
      explicit = true;
      out.add(++k);
    } else if (/^--(?:file|from-file)/.test(a)) {
      explicit = true;
      if (!a.includes('=')) k++;
    } else if (/^--(?:arg|argjson|slurpfile|rawfile)$/.test(a)) k += 2;
    else if (a.startsWith('-') && a.length > 1 && !a.startsWith('--')) {
      const cluster = readCluster(a, spec);
      if (cluster.file) explicit = true;
      if (cluster.pattern) {
        explicit = true;
        // An attached pattern (`-efoo`) is the word itself; a detached one is the next word.
        out.add(cluster.attached ? k : k + 1);
      }
      if (!cluster.attached && cluster.valued) k++;
    } else if (!a.startsWith('-')) {
      if (!explicit) out.add(k);
      return out;
    }
  }
  return out;
}

/** A short-option cluster: the first value-taking letter ends it and takes the rest or the next word. */
function readCluster(word: string, spec: PatternSpec) {
  for (let i = 1; i < word.length; i++) {
    const letter = word[i] as string;
    if (!spec.valued.includes(letter)) continue;
    return {
      valued: true,
      attached: i + 1 < word.length,
      pattern: spec.pattern.includes(letter),
      file: spec.file.includes(letter),
    };
  }
  return { valued: false, attached: false, pattern: false, file: false };
}
