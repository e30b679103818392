// Commands that run another command: unwrapped so the inner command is what gets judged.
// `timeout 5 rm -rf x` is rm; `env -S '…'` and `time -o FILE` are judged themselves.

import { type Judgement, judged } from './judgement.ts';
import { isAssignment } from './shell-parse.ts';

export interface Unwrapped {
  argv: string[];
  /** `env NAME=value cmd`: judged like assignments before a command. */
  assignments: string[];
}

type Wrapper = (args: string[]) => Unwrapped | Judgement;

/**
 * Skips options: `flags` take no value; `valued` take the next word unless attached (-s9,
 * --signal=9). Unknown options are skipped as flags. Returns the index of the first operand.
 */
function skipOptions(args: string[], valued: readonly string[], from = 0): number {
  let i = from;
  for (; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') return i + 1;
    if (!a.startsWith('-') || a === '-') return i;
    if (valued.includes(a)) i++;
  }
  return i;
}

const inner = (argv: string[], assignments: string[] = []): Unwrapped => ({ argv, assignments });

function env(args: string[]): Unwrapped | Judgement {
  let i = 0;
  const assignments: string[] = [];
  for (; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      i++;
      break;
    }
    const long = a.startsWith('--') ? (a.slice(2).split('=')[0] as string) : '';
    if (/^-[a-zA-Z]*S/.test(a) || (long !== '' && 'split-string'.startsWith(long))) {
      const text = a.includes('=')
        ? a.slice(a.indexOf('=') + 1)
        : a.replace(/^-[a-zA-Z]*S/, '') || args[i + 1];
      return judged(
        3,
        'opaque command (env -S splits a string into a command)',
        text ? { nested: [text] } : {},
      );
    }
    if (a === '-u' || a === '-C' || a === '-P') i++;
    else if (a.startsWith('-')) continue;
    else if (isAssignment(a)) assignments.push(a);
    else break;
  }
  while (i < args.length && isAssignment(args[i] as string)) assignments.push(args[i++] as string);
  const argv = args.slice(i);
  if (argv.length === 0) return judged(1, 'env prints the environment', { program: 'env', subcommand: null });
  return inner(argv, assignments);
}

function timeout(args: string[]): Unwrapped | Judgement {
  const i = skipOptions(args, ['-s', '-k', '--signal', '--kill-after']);
  return inner(args.slice(i + 1));
}

function nice(args: string[]): Unwrapped | Judgement {
  const i = skipOptions(args, ['-n', '--adjustment']);
  const argv = args.slice(i);
  return argv.length === 0 ? judged(0, 'nice prints the niceness') : inner(argv);
}

function time(args: string[]): Unwrapped | Judgement {
  const out = args.findIndex((a) => a === '-o' || a.startsWith('--output') || /^-[a-z]*o./.test(a));
  const i = skipOptions(args, ['-f', '--format', '-o', '--output']);
  if (out >= 0 && out < i) return judged(3, 'time -o overwrites a file');
  const argv = args.slice(i);
  return argv.length === 0 ? judged(0, 'time with nothing to time') : inner(argv);
}

const XARGS_VALUED = [
  '-a',
  '-d',
  '-E',
  '-I',
  '-L',
  '-n',
  '-P',
  '-s',
  '--arg-file',
  '--delimiter',
  '--max-args',
];

function xargs(args: string[]): Unwrapped | Judgement {
  const i = skipOptions(args, XARGS_VALUED);
  const argv = args.slice(i);
  return inner(argv.length === 0 ? ['echo'] : argv);
}

function command(args: string[]): Unwrapped | Judgement {
  const i = skipOptions(args, []);
  if (args.slice(0, i).some((a) => /^-[pvV]*[vV]/.test(a)))
    return judged(0, 'command -v describes a command');
  return inner(args.slice(i));
}

function busybox(args: string[]): Unwrapped | Judgement {
  if (args.length === 0 || (args[0] as string).startsWith('-')) return judged(0, 'busybox lists its applets');
  return inner(args);
}

export const WRAPPERS: Record<string, Wrapper> = {
  env,
  timeout,
  nice,
  time,
  xargs,
  command,
  busybox,
  nohup: (args) => inner(args.slice(skipOptions(args, []))),
  builtin: (args) => inner(args),
  stdbuf: (args) =>
    inner(args.slice(skipOptions(args, ['-i', '-o', '-e', '--input', '--output', '--error']))),
  setsid: (args) => inner(args.slice(skipOptions(args, []))),
  ionice: (args) => {
    const i = skipOptions(args, ['-c', '-n', '--class', '--classdata']);
    return args.slice(0, i).some((a) => /^-[a-z]*[pP]|^--pid|^--pgid/.test(a)) || i === args.length
      ? judged(2, 'ionice changes the priority of running processes')
      : inner(args.slice(i));
  },
};
