// The one place the chain trusts a container as the boundary. Inside a sandbox container with no
// network, a command that runs the project's own code (`npm test`, `pytest`, `make test`,
// `node script.js`, `python3 tool.py`) can reach only the workspace, so it asks at score 2 and may
// be allowed for the session, keyed on the runner and its script or subcommand, instead of always
// asking at 3. Nothing else moves: a segment that deletes or overwrites keeps its 3 (the workspace
// is the owner's data), and the policy guard has already refused what it refuses. Pure.
import type { GrantKey, GrantScope, Verdict } from './gate.ts';
import type { Judgement } from './judgement.ts';
import { commandView, hasExpansion, parseCommand, type Segment, unmark } from './shell-parse.ts';

/** A word that is exactly what it looks like: no variable, glob, brace or quoting trick. */
const PLAIN = /^[A-Za-z0-9_./][A-Za-z0-9_./+,=:@%-]*$/;
const PLAIN_FLAG = /^--?[A-Za-z0-9][A-Za-z0-9_.=:,-]*$/;
const TARGET = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const PYTHON = /^python(?:3(?:\.\d{1,2})?)?$/;
const SCRIPT = { python: /\.py$/, node: /\.(?:js|mjs|cjs)$/ } as const;

const plain = (word: string) => !hasExpansion(word) && unmark(word) === word && PLAIN.test(word);
const relative = (path: string) => !path.startsWith('/') && !path.split('/').includes('..');

/** The grant scope of a project-code runner, or undefined when the words are anything else. */
export function projectRunner(argv: readonly string[]): GrantScope | undefined {
  if (argv.some((w) => hasExpansion(w) || unmark(w) !== w)) return undefined;
  const [program = '', first, ...rest] = argv;
  const args = first === undefined ? [] : [first, ...rest];
  const argsPlain = (list: readonly string[]) => list.every((w) => PLAIN.test(w) || PLAIN_FLAG.test(w));
  if (program === 'npm') {
    if ((first === 'test' || first === 't') && rest.length === 0) return { program, subcommand: 'test' };
    const [script, ...after] = rest;
    if ((first === 'run' || first === 'run-script') && script && TARGET.test(script)) {
      if (after.length === 0 || (after[0] === '--' && argsPlain(after.slice(1))))
        return { program, subcommand: `run ${script}` };
    }
    return undefined;
  }
  if (program === 'pytest')
    return argsPlain(args) && args.every((w) => relative(w)) ? { program, subcommand: null } : undefined;
  if (program === 'make') {
    if (args.length === 0) return { program, subcommand: '' };
    return args.length === 1 && TARGET.test(first as string)
      ? { program, subcommand: first as string }
      : undefined;
  }
  if ((program === 'cargo' || program === 'go') && first === 'test' && rest.length === 0)
    return { program, subcommand: 'test' };
  const kind = PYTHON.test(program) ? 'python' : program === 'node' ? 'node' : undefined;
  if (
    kind &&
    first &&
    plain(first) &&
    !first.startsWith('-') &&
    relative(first) &&
    SCRIPT[kind].test(first)
  ) {
    return argsPlain(rest) ? { program, subcommand: first } : undefined;
  }
  return undefined;
}

/** The runner a parsed segment is, when it is nothing but that: no assignments, no redirections. */
function segmentRunner(segment: Segment | undefined): GrantScope | undefined {
  if (!segment || segment.redirects.length > 0 || segment.defines) return undefined;
  const view = commandView(segment);
  if (view.assignments.length > 0 || view.keyword) return undefined;
  return projectRunner(view.argv);
}

export interface RelaxInput {
  /** The chain's verdict for the command in the container, before grants. */
  verdict: Verdict;
  command: string;
  /** The classifier's judgement of each segment, in order. */
  segments: readonly Judgement[];
  /** The narrow scopes the chain's own rules give the other segments (undefined: none may be granted). */
  otherScopes: (segments: Judgement[]) => GrantScope[] | undefined;
}

/**
 * The relaxed verdict (ask at score 2 with a runner-keyed grant), or undefined when the command is
 * not project code alone: then the caller keeps the verdict it had.
 */
export function relaxForContainer({
  verdict,
  command,
  segments,
  otherScopes,
}: RelaxInput): Verdict | undefined {
  if (verdict.verdict !== 'ask' || verdict.score < 3 || segments.length === 0) return undefined;
  const parsed = parseCommand(command).segments;
  // The classifier judged these same segments; if the two ever disagree, nothing is relaxed.
  if (parsed.length !== segments.length) return undefined;
  const runners: GrantScope[] = [];
  const others: Judgement[] = [];
  for (const [i, judgement] of segments.entries()) {
    const runner = segmentRunner(parsed[i]);
    if (runner && judgement.program === runner.program) runners.push(runner);
    else if (judgement.score >= 3) return undefined;
    else others.push(judgement);
  }
  if (runners.length === 0) return undefined;
  const rest = otherScopes(others);
  const grant: GrantKey = rest
    ? {
        kind: 'shell',
        scopes: [
          ...runners.map((scope) => ({ scope, score: 2 })),
          ...rest.map((scope) => ({
            scope,
            score: Math.max(...others.filter((s) => s.program === scope.program).map((s) => s.score)),
          })),
        ],
      }
    : { kind: 'none' };
  const names = runners.map((r) => [r.program, r.subcommand].filter(Boolean).join(' ')).join(', ');
  return {
    verdict: 'ask',
    layer: 'ask',
    score: 2,
    rationale: `${verdict.rationale}; it runs in a sandbox container without network, so it may be allowed for the session as ${names}`,
    ...(verdict.canonical !== undefined ? { canonical: verdict.canonical } : {}),
    grant,
  };
}
