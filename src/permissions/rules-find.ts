// find's expression is a small language: read-only only when every primary is in the safe subset
// below. -exec/-execdir/-ok/-okdir are judged by the command they run (read-only inner command →
// read-only find); -delete, -fprint*, -fls and anything not modelled ask at 3.
import { type Judgement, judged, type RuleContext, type Score } from './judgement.ts';

/** Primaries that take no value. */
const FLAGS = new Set(
  `-print -print0 -ls -prune -quit -true -false -not -a -and -o -or ! ( ) , -depth -d -mount -xdev
   -noleaf -ignore_readdir_race -noignore_readdir_race -daystart -follow -nouser -nogroup -empty
   -readable -writable -executable -warn -nowarn -help --help -version --version -nowarn -x`.split(/\s+/),
);
/** Primaries that take one value. */
const VALUED = new Set(
  `-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size -mtime -mmin
   -atime -amin -ctime -cmin -newer -anewer -cnewer -perm -user -group -uid -gid -links -inum
   -samefile -lname -ilname -maxdepth -mindepth -regextype -fstype -used -context -printf
   -files0-from`.split(/\s+/),
);
const NEWER_XY = /^-newer[aBcmt][aBcmt]$/;
const EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);
const WRITES = new Set(['-fprint', '-fprint0', '-fprintf', '-fls']);

export function findRule(args: string[], ctx: RuleContext): Judgement {
  let k = 0;
  // Leading options: -H -L -P, -D debugopts, -Olevel.
  for (; k < args.length; k++) {
    const a = args[k] as string;
    if (a === '-H' || a === '-L' || a === '-P' || /^-O\d$/.test(a)) continue;
    if (a === '-D') {
      k++;
      continue;
    }
    break;
  }
  // Starting points: up to the first word that starts an expression.
  while (k < args.length && !/^[-(!,)]/.test(args[k] as string)) k++;
  let worst = judged(0, 'find only lists');
  let unknownInner = false;
  for (; k < args.length; k++) {
    const a = args[k] as string;
    if (FLAGS.has(a)) continue;
    if (VALUED.has(a) || NEWER_XY.test(a)) {
      k++;
      continue;
    }
    if (a === '-delete') return judged(3, 'find -delete deletes files');
    if (WRITES.has(a)) return judged(3, `find ${a} writes a file`);
    if (EXEC.has(a)) {
      let end = k + 1;
      while (end < args.length && args[end] !== ';' && !(args[end] === '+' && args[end - 1] === '{}')) end++;
      if (end >= args.length) return judged(3, `find ${a} without its terminating ; or +`);
      const found = execJudgement(a, args.slice(k + 1, end), ctx);
      if (found.known === false) unknownInner = true;
      if (found.score >= worst.score) worst = found;
      k = end;
      continue;
    }
    return judged(3, `find ${a} is outside the safe subset the classifier models`);
  }
  // An unknown program run by -exec can only be granted with find's exact words.
  if (unknownInner) return { ...worst, known: false, grantKey: JSON.stringify(['find', ...args]) };
  return worst;
}

function execJudgement(primary: string, argv: string[], ctx: RuleContext): Judgement {
  const word = argv[0];
  if (word === undefined) return judged(3, `find ${primary} with no command`);
  // The found files themselves would run.
  if (word.includes('{}')) return judged(3, `find ${primary} runs the files it finds`);
  const inner = ctx.inner(argv);
  // -ok asks on a terminal; the shell tool has none, so it is judged like -exec.
  const score = inner.score as Score;
  return judged(
    score,
    score === 0
      ? `find ${primary} runs ${inner.program ?? 'a command'}, which only reads`
      : `find ${primary} runs ${inner.program ?? 'a command'} on every match: ${inner.reason}`,
    {
      subcommand: `${primary} ${inner.program ?? ''}`.trim(),
      ...(inner.nested ? { nested: inner.nested } : {}),
      ...(inner.paths ? { paths: inner.paths } : {}),
      ...(inner.known === false ? { known: false } : {}),
    },
  );
}
