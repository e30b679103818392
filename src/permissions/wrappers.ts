// Commands that run another command: unwrapped so the inner command is what gets judged.
// `timeout 5 rm -rf x` is rm. Each wrapper's options are modelled (which take a value, in every
// written form), so `env --unset X sh -c …` is judged as sh, not X; an option a table does not
// know makes the wrapped command unknowable, so it always asks.

import { type Judgement, judged } from './judgement.ts';
import { type Arity, type OptionTable, type ParsedArgs, parseArgs, shown } from './options.ts';
import { GLOB_MARK } from './shell-marks.ts';
import { isAssignment } from './shell-parse.ts';

export interface Unwrapped {
  argv: string[];
  /** `env NAME=value cmd`: judged like assignments before a command. */
  assignments: string[];
}

type Wrapper = (args: string[]) => Unwrapped | Judgement;

const inner = (argv: string[], assignments: string[] = []): Unwrapped => ({ argv, assignments });

/** A POSIX-style table (options stop at the first operand) with GNU abbreviations. */
const table = (short: Record<string, string>, long: Record<string, Arity>): OptionTable => ({
  short,
  long: { help: 'flag', version: 'flag', ...long },
  abbreviate: true,
  permute: false,
});

/** Parses a wrapper's own options; an unknown one (or a dangling value) makes it opaque. */
function own(name: string, args: string[], t: OptionTable): ParsedArgs | Judgement {
  const parsed = parseArgs(args, t);
  const unknown = parsed.unknown[0];
  if (unknown !== undefined) {
    return judged(3, `opaque command (${name} ${unknown} is an option the classifier does not model)`);
  }
  const dangling = parsed.options.find((o) => t.long[o.name] === 'value' && o.value === undefined);
  if (dangling) return judged(3, `opaque command (${name} ${shown(dangling)} is missing its value)`);
  return parsed;
}

const ENV = table(
  { i: 'ignore-environment', '0': 'null', u: 'unset', C: 'chdir', S: 'split-string', v: 'debug' },
  {
    'ignore-environment': 'flag',
    null: 'flag',
    unset: 'value',
    chdir: 'value',
    'split-string': 'value',
    debug: 'flag',
    'block-signal': 'optional',
    'default-signal': 'optional',
    'ignore-signal': 'optional',
    'list-signal-handling': 'flag',
  },
);

function env(args: string[]): Unwrapped | Judgement {
  // `env -` is `env -i`.
  const parsed = own(
    'env',
    args.map((a, k) =>
      a === '-' && k === args.findIndex((x) => !x.startsWith('-') || x === '-') ? '-i' : a,
    ),
    ENV,
  );
  if ('score' in parsed) return parsed;
  const split = parsed.options.find((o) => o.name === 'split-string');
  if (split) {
    return judged(
      3,
      'opaque command (env -S splits a string into a command)',
      split.value ? { nested: [split.value] } : {},
    );
  }
  const rest = args.slice(parsed.rest);
  let i = 0;
  const assignments: string[] = [];
  while (i < rest.length && isAssignment(rest[i] as string)) assignments.push(rest[i++] as string);
  const argv = rest.slice(i);
  if (argv.length === 0) return judged(1, 'env prints the environment', { program: 'env', subcommand: null });
  return inner(argv, assignments);
}

const TIMEOUT = table(
  { s: 'signal', k: 'kill-after', v: 'verbose' },
  { signal: 'value', 'kill-after': 'value', 'preserve-status': 'flag', foreground: 'flag', verbose: 'flag' },
);
const NICE = table({ n: 'adjustment' }, { adjustment: 'value' });
const TIME = table(
  { p: 'portability', f: 'format', o: 'output', a: 'append', v: 'verbose', q: 'quiet' },
  { portability: 'flag', format: 'value', output: 'value', append: 'flag', verbose: 'flag', quiet: 'flag' },
);
const XARGS = table(
  {
    '0': 'null',
    a: 'arg-file',
    d: 'delimiter',
    E: 'E',
    e: 'eof',
    I: 'I',
    i: 'replace',
    L: 'L',
    l: 'max-lines',
    n: 'max-args',
    o: 'open-tty',
    p: 'interactive',
    P: 'max-procs',
    r: 'no-run-if-empty',
    s: 'max-chars',
    t: 'verbose',
    x: 'exit',
  },
  {
    null: 'flag',
    // -E, -I and -L take a value; their lower-case forms only an attached one.
    E: 'value',
    I: 'value',
    L: 'value',
    'arg-file': 'value',
    delimiter: 'value',
    eof: 'optional',
    replace: 'optional',
    'max-lines': 'optional',
    'max-args': 'value',
    'open-tty': 'flag',
    interactive: 'flag',
    'max-procs': 'value',
    'no-run-if-empty': 'flag',
    'max-chars': 'value',
    'process-slot-var': 'value',
    'show-limits': 'flag',
    verbose: 'flag',
    exit: 'flag',
  },
);
function xargs(args: string[]): Unwrapped | Judgement {
  const parsed = own('xargs', args, XARGS);
  if ('score' in parsed) return parsed;
  const argv = args.slice(parsed.rest);
  // The words xargs adds are file names or contents, judged like a glob that can name options.
  return inner([...(argv.length === 0 ? ['echo'] : argv), `${GLOB_MARK}*`]);
}

const COMMAND = table({ p: 'p', v: 'v', V: 'V' }, { p: 'flag', v: 'flag', V: 'flag' });

function command(args: string[]): Unwrapped | Judgement {
  const parsed = own('command', args, COMMAND);
  if ('score' in parsed) return parsed;
  if (parsed.options.some((o) => o.name === 'v' || o.name === 'V'))
    return judged(0, 'command -v describes a command');
  return inner(args.slice(parsed.rest));
}

function busybox(args: string[]): Unwrapped | Judgement {
  if (args.length === 0) return judged(0, 'busybox lists its applets');
  if (args[0] === '--list' || args[0] === '--list-full' || args[0] === '--help')
    return judged(0, 'busybox lists its applets');
  if ((args[0] as string).startsWith('-')) return judged(3, `opaque command (busybox ${args[0]})`);
  return inner(args);
}

/** A wrapper whose operands before the command are `before` words (timeout's duration). */
const simple =
  (name: string, t: OptionTable, before = 0, empty?: Judgement): Wrapper =>
  (args) => {
    const parsed = own(name, args, t);
    if ('score' in parsed) return parsed;
    const argv = args.slice(parsed.rest + before);
    if (argv.length === 0) return empty ?? judged(0, `${name} runs nothing`);
    return inner(argv);
  };

function nice(args: string[]): Unwrapped | Judgement {
  // Old style: `nice -10 cmd`, `nice --5 cmd`.
  const words = args.map((a, k) => (k === 0 && /^--?\d+$/.test(a) ? `-n${a.replace(/^-/, '')}` : a));
  return simple('nice', NICE, 0, judged(0, 'nice prints the niceness'))(words);
}

function time(args: string[]): Unwrapped | Judgement {
  const parsed = own('time', args, TIME);
  if ('score' in parsed) return parsed;
  if (parsed.options.some((o) => o.name === 'output')) return judged(3, 'time -o overwrites a file');
  const argv = args.slice(parsed.rest);
  return argv.length === 0 ? judged(0, 'time with nothing to time') : inner(argv);
}

const IONICE = table(
  { c: 'class', n: 'classdata', p: 'pid', P: 'pgid', u: 'uid', t: 'ignore' },
  { class: 'value', classdata: 'value', pid: 'flag', pgid: 'flag', uid: 'flag', ignore: 'flag' },
);
const TASKSET = table(
  { a: 'all-tasks', c: 'cpu-list', p: 'pid' },
  { 'all-tasks': 'flag', 'cpu-list': 'flag', pid: 'flag' },
);
const CHRT = table(
  {
    b: 'batch',
    d: 'deadline',
    f: 'fifo',
    i: 'idle',
    o: 'other',
    r: 'rr',
    R: 'reset-on-fork',
    a: 'all-tasks',
    m: 'max',
    p: 'pid',
    v: 'verbose',
    T: 'sched-runtime',
    P: 'sched-period',
    D: 'sched-deadline',
  },
  {
    batch: 'flag',
    deadline: 'flag',
    fifo: 'flag',
    idle: 'flag',
    other: 'flag',
    rr: 'flag',
    'reset-on-fork': 'flag',
    'all-tasks': 'flag',
    max: 'flag',
    pid: 'flag',
    verbose: 'flag',
    'sched-runtime': 'value',
    'sched-period': 'value',
    'sched-deadline': 'value',
  },
);

/** ionice, taskset, chrt: run a command, or (-p) change processes already running. */
const scheduler =
  (name: string, t: OptionTable, before: number): Wrapper =>
  (args) => {
    const parsed = own(name, args, t);
    if ('score' in parsed) return parsed;
    if (parsed.options.some((o) => o.name === 'pid' || o.name === 'pgid' || o.name === 'uid'))
      return judged(2, `${name} changes the scheduling of running processes`);
    if (parsed.options.some((o) => o.name === 'max')) return judged(0, `${name} prints limits`);
    const argv = args.slice(parsed.rest + before);
    if (argv.length === 0) return judged(0, `${name} prints settings`);
    return inner(argv);
  };

const NO_OPTIONS = table({}, {});

export const WRAPPERS: Record<string, Wrapper> = {
  env,
  timeout: simple('timeout', TIMEOUT, 1),
  nice,
  time,
  xargs,
  command,
  busybox,
  nohup: simple('nohup', NO_OPTIONS),
  builtin: (args) => inner(args),
  stdbuf: simple(
    'stdbuf',
    table({ i: 'input', o: 'output', e: 'error' }, { input: 'value', output: 'value', error: 'value' }),
  ),
  setsid: simple(
    'setsid',
    table({ c: 'ctty', f: 'fork', w: 'wait' }, { ctty: 'flag', fork: 'flag', wait: 'flag' }),
  ),
  ionice: scheduler('ionice', IONICE, 0),
  taskset: scheduler('taskset', TASKSET, 1),
  chrt: scheduler('chrt', CHRT, 1),
};
