// tar, with GNU tar's options modelled in every form (old-style `tar czf a.tgz x`, clusters,
// `--opt=v`, `--opt v`, unique prefixes). Listing, comparing and extracting to stdout are
// read-only; writing an archive file, extracting, deleting, and every option that runs a program
// or writes a side file ask at 3.
import { type Judgement, judged } from './judgement.ts';
import { flags, type OptionTable, type ParsedArgs, parseArgs, shortNames, shown, values } from './options.ts';

const TAR: OptionTable = {
  short: shortNames(`A=catenate c=create d=diff r=append t=list u=update x=extract f=file C=directory
    z=gzip j=bzip2 J=xz Z=compress a=auto-compress v=verbose O=to-stdout p=preserve-permissions
    P=absolute-names k=keep-old-files h=dereference T=files-from X=exclude-from
    I=use-compress-program F=info-script g=listed-incremental G=incremental b=blocking-factor
    H=format K=starting-file L=tape-length M=multi-volume N=newer V=label W=verify m=touch
    o=o S=sparse U=unlink-first w=interactive B=read-full-records i=ignore-zeros l=check-links
    R=block-number s=preserve-order n=seek`),
  long: {
    ...flags(`catenate concatenate create diff compare append list update extract get delete gzip
      gunzip ungzip bzip2 xz lzip lzma lzop zstd compress uncompress auto-compress verbose
      to-stdout preserve-permissions same-permissions absolute-names keep-old-files
      keep-newer-files skip-old-files overwrite overwrite-dir remove-files unlink-first
      recursive-unlink dereference hard-dereference exclude-vcs exclude-vcs-ignores
      exclude-caches exclude-caches-all exclude-caches-under exclude-backups incremental
      multi-volume verify touch o no-same-owner same-owner no-same-permissions sparse wildcards
      no-wildcards anchored no-anchored wildcards-match-slash no-wildcards-match-slash
      ignore-case no-ignore-case null no-null numeric-owner force-local totals
      show-transformed-names show-stored-names ignore-failed-read one-file-system
      no-recursion recursion seek no-seek xattrs no-xattrs acls no-acls selinux no-selinux utc
      full-time ignore-zeros check-links block-number preserve-order same-order help usage
      version interactive confirmation read-full-records show-defaults delay-directory-restore
      no-delay-directory-restore no-auto-compress no-unquote unquote no-overwrite-dir
      atime-preserve check-device no-check-device posix verbatim-files-from
      no-verbatim-files-from keep-directory-symlink quoting-style restrict`),
    ...values(`file directory files-from exclude-from use-compress-program info-script
      new-volume-script listed-incremental blocking-factor format starting-file tape-length
      newer newer-mtime after-date label owner group mode mtime sort transform xform
      strip-components to-command index-file rsh-command rmt-command exclude exclude-tag
      exclude-tag-all exclude-tag-under exclude-ignore exclude-ignore-recursive volno-file
      record-size suffix occurrence warning owner-map group-map pax-option xattrs-include
      xattrs-exclude level hole-detection add-file anchored-names`),
    checkpoint: 'optional',
    'checkpoint-action': 'value',
    backup: 'optional',
  },
  abbreviate: true,
};

/** Options that run a program, write a side file or delete: always 3. */
const TAR_DANGER: Record<string, string> = {
  'use-compress-program': 'runs a program',
  'info-script': 'runs a program',
  'new-volume-script': 'runs a program',
  'to-command': 'runs a program on every member',
  'checkpoint-action': 'runs a program',
  'rsh-command': 'runs a program',
  'rmt-command': 'runs a program',
  'index-file': 'writes a file',
  'listed-incremental': 'writes a snapshot file',
  'volno-file': 'writes a file',
  'remove-files': 'deletes the files it archives',
  delete: 'removes members from an archive',
};
const MODES: Record<string, 'reads' | 'writes' | 'extracts'> = {
  list: 'reads',
  diff: 'reads',
  compare: 'reads',
  create: 'writes',
  append: 'writes',
  update: 'writes',
  catenate: 'writes',
  concatenate: 'writes',
  extract: 'extracts',
  get: 'extracts',
};

/** `tar czf a.tgz x` → `tar -c -z -f a.tgz x`: old-style letters take their values in order. */
function oldStyle(args: string[]): string[] {
  const first = args[0];
  if (first === undefined || first.startsWith('-') || !/^[A-Za-z]+$/.test(first)) return args;
  const out: string[] = [];
  let next = 1;
  for (const letter of first) {
    const name = TAR.short?.[letter];
    out.push(`-${letter}`);
    if (name !== undefined && TAR.long[name] === 'value' && next < args.length)
      out.push(args[next++] as string);
  }
  return [...out, ...args.slice(next)];
}

export function tarRule(args: string[]): Judgement {
  const parsed: ParsedArgs = parseArgs(oldStyle(args), TAR);
  const unknown = parsed.unknown[0];
  if (unknown !== undefined) return judged(3, `tar ${unknown} is an option the classifier does not model`);
  for (const o of parsed.options) {
    const what = Object.hasOwn(TAR_DANGER, o.name) ? TAR_DANGER[o.name] : undefined;
    if (what) return judged(3, `tar ${shown(o)} ${what}`);
  }
  const file = parsed.options.filter((o) => o.name === 'file').map((o) => o.value ?? '');
  // GNU tar reads `host:file` as a remote archive, reached through rsh or ssh.
  const forceLocal = parsed.options.some((o) => o.name === 'force-local');
  if (!forceLocal && file.some((f) => /^[^/]*:/.test(f)))
    return judged(3, 'tar reaches a remote archive (host:file) through a remote shell');
  const modes = new Set(parsed.options.map((o) => MODES[o.name]).filter(Boolean));
  if (modes.has('extracts')) {
    return parsed.options.some((o) => o.name === 'to-stdout')
      ? judged(0, 'tar extracts to stdout only')
      : judged(3, 'tar -x extracts over existing files');
  }
  if (modes.has('writes')) {
    const named = file.find((f) => f !== '-' && f !== '/dev/stdout');
    if (named !== undefined) return judged(3, `tar writes the archive ${named}`);
    return file.length > 0
      ? judged(0, 'tar writes an archive to stdout')
      : judged(1, 'tar writes an archive to the default device');
  }
  if (modes.has('reads')) return judged(0, 'tar only lists');
  return judged(1, 'tar with no clear mode');
}
