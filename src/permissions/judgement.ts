// The shape every classifier rule returns, and the option matching the rules share.
import type { HereDoc } from './shell-marks.ts';

/** 0 harmless (runs without asking), 1–2 asks unless a grant covers it, 3 always asks. */
export type Score = 0 | 1 | 2 | 3;

export interface Judgement {
  score: Score;
  /** One line the owner can read, e.g. "rm deletes files". */
  reason: string;
  /** The program judged, after unwrapping (`timeout 5 mv a b` → mv); what a grant names. */
  program?: string;
  /** Its subcommand where it has them (`git add` → add); part of a grant. */
  subcommand?: string | null;
  /** Paths the command opens that are not words of its own (sed's `r FILE`); the guard judges them. */
  paths?: string[];
  /** Shell text the command runs (sh -c, eval, a here-document into sh); the guard judges it too. */
  nested?: string[];
  /**
   * For programs that reach the network (curl, wget, git clone/fetch, ssh, ping…): the hosts parsed
   * from their URL or host arguments, so a grant can be keyed on program + host. `null` when the
   * program reaches the network but no host could be parsed: no grant may cover it. Absent for
   * programs that do not reach the network. `remotes`: git remotes named instead of a URL
   * (`git fetch origin`); their URL is the repository's configuration. Empty hosts and remotes: the
   * default remote.
   */
  network?: { hosts: string[]; remotes?: string[] } | null;
  /** False when no rule knows the program (judged by `unknownRule`); absent means known. */
  known?: boolean;
  /**
   * What a grant must match exactly when program + subcommand is too broad: for an unknown program,
   * its exact argv (JSON of [program, ...args]). Absent: program + subcommand (+ hosts) suffice.
   */
  grantKey?: string;
}

export interface RuleContext {
  /** The program as invoked (a basename). */
  name: string;
  /** Its input comes through a pipe. */
  piped: boolean;
  /** A here-document feeds it. */
  heredoc?: HereDoc;
  /** Judges a command this one runs (wrappers, find -exec, xargs). */
  inner(argv: string[]): Judgement;
}

export type Rule = (args: string[], ctx: RuleContext) => Judgement;

export const judged = (score: Score, reason: string, extra?: Partial<Judgement>): Judgement =>
  extra ? { score, reason, ...extra } : { score, reason };

/** The worse of two judgements; on a tie the first. */
export const worse = (a: Judgement, b: Judgement): Judgement => (b.score > a.score ? b : a);

export const fixed =
  (score: Score, reason: string): Rule =>
  (_args, ctx) =>
    judged(
      score,
      reason.replace('$0', () => ctx.name),
    );

export interface OptionSpec {
  /** Short option letters, found also inside clusters like -rfo. */
  short?: string;
  /** Long option names without dashes; a unique GNU prefix (--compress-prog) counts too. */
  long?: readonly string[];
  /** Exact long names that are harmless though they are a prefix of a listed one (git --text). */
  safe?: readonly string[];
  /** Single-dash long options matched exactly (find -exec). */
  words?: readonly string[];
}

/** The first argument using one of the options, or undefined. Stops at `--`. */
export function usesOption(args: readonly string[], spec: OptionSpec): string | undefined {
  for (const a of args) {
    if (a === '--') break;
    if (spec.words?.includes(a)) return a;
    if (a.startsWith('--')) {
      if (!spec.long) continue;
      const name = a.slice(2).split('=')[0] as string;
      if (name === '' || spec.safe?.includes(name)) continue;
      if (spec.long.some((l) => l.startsWith(name))) return a;
    } else if (spec.short && a.length > 1 && a.startsWith('-') && !/^-\d+$/.test(a)) {
      for (let i = 1; i < a.length; i++) if (spec.short.includes(a[i] as string)) return a;
    }
  }
  return undefined;
}

/**
 * Arguments that are not options. `takesValue`: short letters whose value is the next argument
 * (so it is not counted); long options are assumed to use `=`.
 */
export function positionals(args: readonly string[], takesValue = ''): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      out.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('-') && a.length > 1) {
      if (!a.startsWith('--') && a.length === 2 && takesValue.includes(a[1] as string)) i++;
      continue;
    }
    out.push(a);
  }
  return out;
}

/** The first non-option argument: a subcommand (`npm install`), skipping values of `takesValue`. */
export const firstPositional = (args: readonly string[], takesValue = ''): string | undefined =>
  positionals(args, takesValue)[0];

const QUIET = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '-']);
export const isQuietTarget = (path: string): boolean => QUIET.has(path) || /^\/dev\/fd\/\d+$/.test(path);
