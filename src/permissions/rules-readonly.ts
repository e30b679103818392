// The most used read-only programs with their options modelled (GNU coreutils and grep): every
// option they know only changes what they print, so a known option runs freely and one the table
// does not know asks at 1 (the program may have grown an option that runs something).
// binutils' --plugin loads a shared library: nm, objdump, readelf, size and strings ask at 3 for it.
import { judged, type Rule } from './judgement.ts';
import { flags, type OptionTable, parseArgs, shortNames, values } from './options.ts';

/** A table from compact lists: short flag letters, short letters taking a value, long names. */
function table(short: string, longFlags: string, longValues = '', optional = ''): OptionTable {
  const names = shortNames(short);
  const long = { ...flags(`${longFlags} help version`), ...(longValues ? values(longValues) : {}) };
  for (const name of optional.split(/\s+/).filter(Boolean)) long[name] = 'optional';
  // Short letters without a long name of their own are flags named by the letter.
  for (const [letter, name] of Object.entries(names)) if (name === letter) long[letter] ??= 'flag';
  // Old-style counts (`head -20`, `grep -3`): digits are flags.
  for (const d of '0123456789') if (!(d in names)) names[d] = 'digit';
  long.digit = 'flag';
  return { short: names, long, abbreviate: true };
}

const LS = table(
  `a=all A=almost-all b=escape B=ignore-backups c=c C=C d=directory D=dired f=f F=classify
   g=g G=no-group h=human-readable H=dereference-command-line i=inode I=ignore k=kibibytes
   l=l L=dereference m=m n=numeric-uid-gid N=literal o=o p=p q=hide-control-chars
   Q=quote-name r=reverse R=recursive s=size S=S t=t T=tabsize u=u U=U v=v w=width x=x X=X
   Z=context 1=1`,
  `all almost-all author escape ignore-backups directory dired file-type full-time
   group-directories-first no-group human-readable si dereference-command-line
   dereference-command-line-symlink-to-dir hide-control-chars inode kibibytes dereference
   numeric-uid-gid literal show-control-chars quote-name reverse recursive size context zero`,
  'ignore tabsize width indicator-style quoting-style sort time time-style format block-size hide',
  'classify color hyperlink',
);
const CAT = table(
  `A=show-all b=number-nonblank e=e E=show-ends n=number s=squeeze-blank t=t T=show-tabs u=u
   v=show-nonprinting`,
  'show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting',
);
const HEAD = table(
  'c=bytes n=lines q=quiet v=verbose z=zero-terminated',
  'quiet silent verbose zero-terminated',
  'bytes lines',
);
const TAIL = table(
  'c=bytes n=lines f=follow F=F q=quiet s=sleep-interval v=verbose z=zero-terminated',
  'retry quiet silent verbose zero-terminated',
  'bytes lines pid sleep-interval max-unchanged-stats',
  'follow',
);
const WC = table(
  'c=bytes m=chars l=lines L=max-line-length w=words',
  'bytes chars lines max-line-length words',
  'files0-from total',
);
const GREP = table(
  `E=extended-regexp F=fixed-strings G=basic-regexp P=perl-regexp e=regexp f=file i=ignore-case
   y=y w=word-regexp x=line-regexp z=null-data s=no-messages v=invert-match V=version c=count
   L=files-without-match l=files-with-matches m=max-count o=only-matching q=quiet
   H=with-filename h=no-filename b=byte-offset n=line-number T=initial-tab Z=null
   A=after-context B=before-context C=context a=text I=I d=directories D=devices r=recursive
   R=dereference-recursive U=binary u=u`,
  `extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case word-regexp
   line-regexp null-data no-messages invert-match count files-without-match files-with-matches
   only-matching quiet silent with-filename no-filename byte-offset line-number line-buffered
   initial-tab null text recursive dereference-recursive binary no-group-separator`,
  `regexp file max-count label binary-files directories devices include exclude exclude-from
   exclude-dir after-context before-context context group-separator`,
  'color colour',
);
const DU = table(
  `a=all b=b B=block-size c=total d=max-depth D=dereference-args h=human-readable
   H=dereference-args k=k L=dereference l=count-links m=m P=no-dereference s=summarize
   S=separate-dirs t=threshold x=one-file-system X=exclude-from 0=null`,
  `all apparent-size bytes total dereference-args human-readable inodes dereference count-links
   no-dereference null separate-dirs si summarize one-file-system`,
  'block-size max-depth threshold time-style exclude-from exclude files0-from',
  'time',
);
const CUT = table(
  'b=bytes c=characters d=delimiter f=fields n=n s=only-delimited z=zero-terminated',
  'complement only-delimited zero-terminated',
  'bytes characters delimiter fields output-delimiter',
);

const tabled =
  (t: OptionTable): Rule =>
  (args, ctx) => {
    const unknown = parseArgs(args, t).unknown[0];
    return unknown === undefined
      ? judged(0, `${ctx.name} only reads`)
      : judged(1, `${ctx.name} ${unknown} is an option the classifier does not model`);
  };

export const READ_ONLY_TABLES: Record<string, Rule> = {
  ls: tabled(LS),
  dir: tabled(LS),
  vdir: tabled(LS),
  cat: tabled(CAT),
  head: tabled(HEAD),
  tail: tabled(TAIL),
  wc: tabled(WC),
  grep: tabled(GREP),
  egrep: tabled(GREP),
  fgrep: tabled(GREP),
  du: tabled(DU),
  cut: tabled(CUT),
};

/** binutils programs: read-only except --plugin, which loads a shared library. */
export const binutilsRule: Rule = (args, ctx) =>
  args.some((a) => /^--pl(?:u(?:g(?:in?)?)?)?(?:=|$)/.test(a))
    ? judged(3, `${ctx.name} --plugin loads a shared library, which runs its code`)
    : judged(0, `${ctx.name} only reads`);
