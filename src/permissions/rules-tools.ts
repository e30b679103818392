// Read-only tools whose options can run a program or write a file: sort, man, less, sdiff, diff3,
// split, openssl, ag, ack, file. Each has its options modelled; a modelled dangerous option asks
// at 3, an option the table does not know at least 1 (3 where the tool can run code or write).
import { judged, type Rule, type Score } from './judgement.ts';
import { flags, type OptionTable, parseArgs, shortNames, shown, values } from './options.ts';

interface ToolSpec {
  table: OptionTable;
  /** Canonical option → what it does; any of them asks at 3. */
  danger: Record<string, string>;
  /** Score for an option the table does not know. */
  unknown: Score;
  /** Whether the tool reads only when no dangerous option is used (else `otherwise`). */
  otherwise?: [Score, string];
  /** Values that make a dangerous option harmless (`-o /dev/stdout`). */
  harmless?: (name: string, value: string | undefined) => boolean;
}

const toStdout = (_: string, v: string | undefined) => v === '-' || v === '/dev/stdout';

/** A rule from a spec: the first dangerous option wins, then unknown options, then the default. */
export const toolRule =
  (spec: ToolSpec): Rule =>
  (args, ctx) => {
    const parsed = parseArgs(args, spec.table);
    for (const o of parsed.options) {
      const what = Object.hasOwn(spec.danger, o.name) ? spec.danger[o.name] : undefined;
      if (what && !spec.harmless?.(o.name, o.value)) return judged(3, `${ctx.name} ${shown(o)} ${what}`);
    }
    const unknown = parsed.unknown[0];
    if (unknown !== undefined)
      return judged(spec.unknown, `${ctx.name} ${unknown} is an option the classifier does not model`);
    const [score, what] = spec.otherwise ?? [0, 'only reads'];
    return judged(score, `${ctx.name} ${what}`);
  };

export const sortRule = toolRule({
  table: {
    short: shortNames(`b=ignore-leading-blanks d=dictionary-order f=ignore-case g=general-numeric-sort
      h=human-numeric-sort i=ignore-nonprinting M=month-sort n=numeric-sort R=random-sort r=reverse
      V=version-sort c=check C=C m=merge s=stable u=unique z=zero-terminated k=key
      t=field-separator o=output S=buffer-size T=temporary-directory`),
    long: {
      ...flags(`ignore-leading-blanks dictionary-order ignore-case general-numeric-sort
        human-numeric-sort ignore-nonprinting month-sort numeric-sort random-sort reverse
        version-sort C merge stable unique zero-terminated debug help version`),
      ...values(`random-source sort key field-separator output buffer-size temporary-directory
        compress-program files0-from parallel batch-size`),
      check: 'optional',
    },
    abbreviate: true,
  },
  danger: {
    output: 'overwrites a file (sort -o)',
    'compress-program': 'runs a program (--compress-program)',
  },
  harmless: toStdout,
  unknown: 3,
});

export const manRule = toolRule({
  table: {
    short: shortNames(`a=all C=config-file d=debug D=default e=extension f=whatis h=help H=html
      i=ignore-case I=match-case k=apropos K=global-apropos l=local-file L=locale m=systems
      M=manpath p=preprocessor P=pager r=prompt R=recode S=sections s=sections t=troff
      T=troff-device u=update w=where W=where-cat X=gxditview Z=ditroff 7=ascii E=encoding
      c=catman`),
    long: {
      ...flags(`all debug default whatis help ignore-case match-case apropos global-apropos
        local-file troff update where where-cat ditroff ascii catman regex wildcard names-only
        no-subpages no-hyphenation no-justification usage version`),
      ...values(`config-file extension locale systems manpath preprocessor pager prompt recode
        sections encoding`),
      html: 'optional',
      'troff-device': 'optional',
      gxditview: 'optional',
    },
    abbreviate: true,
  },
  danger: {
    html: 'runs a browser',
    gxditview: 'runs a viewer',
    pager: 'runs a pager program',
    'config-file': 'reads a configuration that can name programs',
    preprocessor: 'chooses preprocessor programs',
    prompt: 'sets a pager prompt',
    update: 'rewrites its caches',
    catman: 'writes cat pages',
  },
  unknown: 1,
  otherwise: [0, 'only prints'],
});

const LESS_LONG = values(`log-file LOG-FILE lesskey-file lesskey-src lesskey-content tag tag-file
  pattern prompt tabs max-back-scroll window shift jump-target header line-num-width
  status-col-width color intr rscroll`);
export const lessRule = toolRule({
  table: {
    short: shortNames(`o=log-file O=LOG-FILE k=lesskey-file t=tag T=tag-file p=pattern P=prompt
      x=tabs h=max-back-scroll z=window j=jump-target y=y b=b a=a A=A B=B c=c C=C d=d e=e E=E
      f=f F=F g=g G=G i=i I=I J=J K=K L=L m=m M=M n=n N=N q=q Q=Q r=r R=R s=s S=S u=u U=U
      V=V w=w W=W X=X ~=~`),
    long: {
      ...LESS_LONG,
      ...flags(`y b a A B c C d e E f F g G i I J K L m M n N q Q r R s S u U V w W X ~
        quit-if-one-screen no-init RAW-CONTROL-CHARS raw-control-chars chop-long-lines
        ignore-case IGNORE-CASE LINE-NUMBERS line-numbers quiet silent QUIET SILENT
        squeeze-blank-lines mouse no-keypad follow-name incsearch use-color help version
        quit-at-eof QUIT-AT-EOF long-prompt search-skip-screen status-column tilde
        underline-special no-histdups hilite-unread HILITE-UNREAD no-lessopen`),
      y: 'value',
      b: 'value',
    },
  },
  danger: {
    'log-file': 'writes a log file',
    'LOG-FILE': 'overwrites a log file',
    'lesskey-file': 'loads key bindings that can run commands',
    'lesskey-src': 'loads key bindings that can run commands',
    'lesskey-content': 'loads key bindings that can run commands',
    'tag-file': 'reads a tags file',
  },
  unknown: 1,
});

export const sdiffRule = toolRule({
  table: {
    short: shortNames(`o=output i=ignore-case E=ignore-tab-expansion Z=ignore-trailing-space
      b=ignore-space-change W=ignore-all-space B=ignore-blank-lines I=ignore-matching-lines
      a=text w=width l=left-column s=suppress-common-lines t=expand-tabs d=minimal H=speed-large-files
      v=version`),
    long: {
      ...flags(`ignore-case ignore-tab-expansion ignore-trailing-space ignore-space-change
        ignore-all-space ignore-blank-lines text left-column suppress-common-lines expand-tabs
        minimal speed-large-files strip-trailing-cr help version`),
      ...values('output ignore-matching-lines width tabsize diff-program'),
    },
    abbreviate: true,
  },
  danger: { output: 'writes the merged file', 'diff-program': 'runs another program' },
  unknown: 3,
});

export const diff3Rule = toolRule({
  table: {
    short: shortNames(`A=show-all e=ed E=show-overlap x=overlap-only X=X 3=easy-only i=i m=merge
      a=text T=initial-tab L=label v=version`),
    long: {
      ...flags(
        'show-all ed show-overlap overlap-only X easy-only i merge text initial-tab strip-trailing-cr help version',
      ),
      ...values('label diff-program'),
    },
    abbreviate: true,
  },
  danger: { 'diff-program': 'runs another program' },
  unknown: 3,
});

export const splitRule = toolRule({
  table: {
    short: shortNames(`a=suffix-length b=bytes C=line-bytes d=d x=x l=lines n=number t=separator
      u=unbuffered e=elide-empty-files`),
    long: {
      ...flags('d x unbuffered elide-empty-files verbose help version'),
      ...values('suffix-length bytes line-bytes lines number separator additional-suffix filter'),
      'numeric-suffixes': 'optional',
      'hex-suffixes': 'optional',
    },
    abbreviate: true,
  },
  danger: { filter: 'runs a shell command on every piece' },
  unknown: 3,
  otherwise: [2, 'writes files'],
});

export const agRule = toolRule({
  table: { long: { pager: 'value' }, abbreviate: false },
  danger: { pager: 'runs a pager program' },
  // ag's many flags only read; only --pager (and unknown long forms of it) run anything.
  unknown: 0,
});

/** ack reads the project's own .ackrc (which can set --pager or --output) unless --noenv. */
export const ackRule: Rule = (args) => {
  if (args.some((a) => /^--(?:pager|output|ackrc|env|create-ackrc)/.test(a)))
    return judged(3, 'ack --pager, --output or --ackrc runs programs or Perl');
  if (!args.includes('--noenv')) return judged(3, "ack reads the project's .ackrc, which can run programs");
  return judged(0, 'ack only searches');
};

export const fileRule = toolRule({
  table: {
    short: shortNames(`b=brief c=checking-printout C=compile d=d E=E e=exclude F=separator
      f=files-from h=no-dereference i=mime I=mime k=keep-going l=list L=dereference m=magic-file
      N=no-pad n=no-buffer p=preserve-date P=parameter r=raw s=special-files S=no-sandbox
      v=version z=uncompress Z=uncompress-noreport 0=print0`),
    long: {
      ...flags(`brief checking-printout compile d E no-dereference mime mime-type mime-encoding
        keep-going list dereference no-pad no-buffer preserve-date raw special-files no-sandbox
        version uncompress uncompress-noreport print0 extension apple help`),
      ...values('exclude exclude-quiet separator files-from magic-file parameter'),
    },
    abbreviate: true,
  },
  danger: { compile: 'writes a compiled magic file', 'no-sandbox': 'turns off its sandbox' },
  unknown: 1,
});

const OPENSSL_READS = new Set(
  `version help list x509 crl asn1parse dgst md5 sha1 sha224 sha256 sha384 sha512 base64 verify
   rand prime errstr ciphers pkey rsa ec pkcs7 crl2pkcs7 storeutl speed enc sess_id nseq s_client`.split(
    /\s+/,
  ),
);
/** openssl options (one or two dashes, `-opt=value` too) that write, load code or read config. */
const OPENSSL_DANGER = new Set(
  `out keyout writerand engine provider provider-path config CAcreateserial CAserial certout
   sess_out keylogfile msgfile signature sigfile ssl_config propquery CAkeyform dhparam_out
   genkey trace`.split(/\s+/),
);

export const opensslRule: Rule = (args) => {
  const sub = args[0];
  if (sub === undefined) return judged(3, 'openssl with no command reads commands from stdin');
  for (const a of args.slice(1)) {
    if (!a.startsWith('-')) continue;
    const name = a.replace(/^--?/, '').split('=')[0] as string;
    if (
      OPENSSL_DANGER.has(name) &&
      !(name === 'out' && (args[args.indexOf(a) + 1] === '-' || a.endsWith('=-')))
    )
      return judged(3, `openssl ${sub} -${name} writes a file or loads code`, { subcommand: sub });
  }
  if (sub === 's_client') {
    const connect = args[args.indexOf('-connect') + 1];
    const host = connect?.replace(/:\d+$/, '') ?? '';
    return judged(2, 'openssl s_client reaches the network', {
      subcommand: sub,
      network: args.includes('-connect') && /^[\w.-]+$/.test(host) ? { hosts: [host.toLowerCase()] } : null,
    });
  }
  if (OPENSSL_READS.has(sub)) return judged(0, `openssl ${sub} only prints`, { subcommand: sub });
  return judged(2, `openssl ${sub} may write keys or files`, { subcommand: sub });
};

/** pandoc: filters and defaults files run programs; -o writes. */
export const pandocRule: Rule = (args) => {
  if (
    args.some(
      (a) =>
        /^(?:-F|-L|-d|--filter|--lua-filter|--defaults|--data-dir|--extract-media)/.test(a) ||
        /^-[A-Za-z]*[FLd]/.test(a),
    )
  )
    return judged(3, 'pandoc filters and defaults files run programs');
  if (args.some((a) => /^(?:-o|--output|--log)/.test(a) || /^-[A-Za-z]*o/.test(a)))
    return judged(3, 'pandoc -o writes a file');
  return judged(2, 'pandoc converts documents');
};
