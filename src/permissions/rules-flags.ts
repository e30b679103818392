// Commands that are read-only until a flag makes them execute or write: find, tar, sort, rg, fd,
// man, tee, curl, wget, compressors and a few more. GNU long options count by unique prefix too.
import {
  isQuietTarget,
  type Judgement,
  judged,
  positionals,
  type Rule,
  type RuleContext,
  type Score,
  usesOption,
} from './judgement.ts';

const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);
const FIND_WRITE = new Set(['-fprint', '-fprint0', '-fprintf', '-fls']);

export function findRule(args: string[], ctx: RuleContext): Judgement {
  let worst = judged(0, 'find only lists');
  for (let k = 0; k < args.length; k++) {
    const a = args[k] as string;
    if (a === '-delete') return judged(3, 'find -delete deletes files');
    if (FIND_WRITE.has(a)) return judged(3, `find ${a} writes a file`);
    if (FIND_EXEC.has(a)) {
      let end = k + 1;
      while (end < args.length && args[end] !== ';' && args[end] !== '+') end++;
      const inner = ctx.inner(args.slice(k + 1, end));
      const score = Math.max(2, inner.score) as Score;
      const found = judged(
        score,
        `find ${a} runs ${inner.program ?? 'a command'} on every match: ${inner.reason}`,
        {
          subcommand: `${a} ${inner.program ?? ''}`.trim(),
          ...(inner.nested ? { nested: inner.nested } : {}),
        },
      );
      if (found.score > worst.score) worst = found;
      k = end;
    }
  }
  return worst;
}

export function fdRule(args: string[]): Judgement {
  const exec = usesOption(args, { short: 'xX', long: ['exec', 'exec-batch'] });
  return exec ? judged(3, `fd ${exec} runs a command on every match`) : judged(0, 'fd only lists');
}

const TAR_DANGER = [
  'checkpoint-action',
  'to-command',
  'use-compress-program',
  'info-script',
  'new-volume-script',
  'rsh-command',
  'rmt-command',
  'index-file',
];

export function tarRule(args: string[]): Judgement {
  const danger = usesOption(args, { short: 'IF', long: TAR_DANGER, safe: ['to-stdout', 'checkpoint'] });
  if (danger) return judged(3, `tar ${danger.split('=')[0]} runs a program or writes outside the archive`);
  // GNU tar reads `host:file` as a remote archive, reached through rsh or ssh.
  if (args.some((a) => /^[^-/][^/]*:/.test(a)) && !args.includes('--force-local')) {
    return judged(3, 'tar reaches a remote archive (host:file) through a remote shell');
  }
  // Old style: `tar xzf a.tar`, the first word is a cluster of letters without a dash.
  const first = args[0] && !args[0].startsWith('-') ? `-${args[0]}` : '';
  const all = first ? [first, ...args.slice(1)] : args;
  const has = (short: string, long: string[]) => usesOption(all, { short, long }) !== undefined;
  if (has('', ['delete'])) return judged(3, 'tar --delete removes members from an archive');
  if (has('x', ['extract', 'get'])) {
    return has('O', ['to-stdout'])
      ? judged(0, 'tar extracts to stdout only')
      : judged(3, 'tar -x extracts over existing files');
  }
  if (has('cruA', ['create', 'append', 'update', 'catenate', 'concatenate']))
    return judged(2, 'tar writes an archive');
  if (has('td', ['list', 'diff', 'compare'])) return judged(0, 'tar only lists');
  return judged(1, 'tar with no clear mode');
}

export function sortRule(args: string[]): Judgement {
  const danger = usesOption(args, { short: 'o', long: ['output', 'compress-program'] });
  if (!danger) return judged(0, 'sort only prints');
  return danger.startsWith('--c')
    ? judged(3, 'sort --compress-program runs a program')
    : judged(3, 'sort -o overwrites a file');
}

export function rgRule(args: string[]): Judgement {
  if (usesOption(args, { long: ['pre'], safe: ['pre-glob'] }))
    return judged(3, 'rg --pre runs a program on every file');
  if (usesOption(args, { short: 'z', long: ['search-zip'] }))
    return judged(2, 'rg -z runs decompression programs');
  return judged(0, 'rg only searches');
}

export function manRule(args: string[]): Judgement {
  const danger = usesOption(args, { short: 'HPX', long: ['html', 'pager', 'gxditview', 'browser'] });
  return danger ? judged(3, `man ${danger} runs another program`) : judged(0, 'man only prints');
}

export function teeRule(args: string[]): Judgement {
  const files = positionals(args).filter((f) => !isQuietTarget(f));
  if (files.length === 0) return judged(0, 'tee only prints');
  if (usesOption(args, { short: 'a', long: ['append'] })) return judged(2, `tee -a appends to ${files[0]}`);
  return judged(3, `tee overwrites ${files[0]}`);
}

const CURL_SEND = [
  'data',
  'data-ascii',
  'data-binary',
  'data-raw',
  'data-urlencode',
  'form',
  'form-string',
  'json',
];

export function curlRule(args: string[]): Judgement {
  const output = usesOption(args, {
    short: 'oOJ',
    long: ['output', 'remote-name', 'remote-name-all', 'remote-header-name'],
  });
  if (output && !(output === '-o' && args[args.indexOf(output) + 1] === '-')) {
    return judged(3, `curl ${output} writes a file`);
  }
  const send = usesOption(args, { short: 'dFT', long: [...CURL_SEND, 'upload-file'] });
  if (send) return judged(3, `curl ${send.split('=')[0]} sends data`);
  const method = args.findIndex(
    (a) => a === '-X' || a === '--request' || a.startsWith('--request=') || /^-X./.test(a),
  );
  if (method >= 0) {
    const value = (args[method] as string).replace(/^(?:-X|--request=?)/, '') || args[method + 1] || '';
    if (!/^(?:GET|HEAD|OPTIONS)$/i.test(value)) return judged(3, `curl sends a ${value} request`);
  }
  if (usesOption(args, { short: 'K', long: ['config'] }))
    return judged(3, 'curl -K reads options from a file');
  return judged(2, 'curl reaches the network (web_fetch is the guarded way to read a page)');
}

export function wgetRule(args: string[]): Judgement {
  const output = args.findIndex((a) => a === '-O' || a.startsWith('--output-document') || /^-O./.test(a));
  if (output >= 0) {
    const value =
      (args[output] as string).replace(/^(?:-O|--output-document=?)/, '') || args[output + 1] || '';
    if (value !== '-') return judged(3, `wget -O overwrites ${value}`);
  }
  const danger = usesOption(args, {
    short: 'e',
    long: ['post-data', 'post-file', 'body-data', 'body-file', 'method', 'execute', 'use-askpass'],
  });
  if (danger) return judged(3, `wget ${danger.split('=')[0]} sends data or runs commands`);
  return judged(2, 'wget downloads files from the network');
}

/** gzip-like: in place unless writing to stdout, listing or testing. */
export const compressorRule: Rule = (args, ctx) =>
  usesOption(args, { short: 'clt', long: ['stdout', 'to-stdout', 'list', 'test'] })
    ? judged(0, `${ctx.name} only prints`)
    : judged(2, `${ctx.name} replaces files with (de)compressed ones`);

export const unzipRule: Rule = (args) => {
  if (usesOption(args, { short: 'lvtpZ' })) return judged(0, 'unzip only lists');
  return judged(3, 'unzip extracts files, which can overwrite existing ones');
};

/** Read-only unless one of `spec`'s options is used; then `score`. */
export const readOnlyUnless =
  (spec: Parameters<typeof usesOption>[1], score: 1 | 2 | 3, what: string): Rule =>
  (args, ctx) => {
    const used = usesOption(args, spec);
    return used
      ? judged(score, `${ctx.name} ${used.split('=')[0]} ${what}`)
      : judged(0, `${ctx.name} only reads`);
  };

/** Read-only unless it gets more than `max` operands (uniq IN OUT writes OUT). */
export const readOnlyUpTo =
  (max: number, takesValue: string, what: string): Rule =>
  (args, ctx) =>
    positionals(args, takesValue).length > max
      ? judged(3, `${ctx.name} ${what}`)
      : judged(0, `${ctx.name} only reads`);

export const chmodRule: Rule = (args, ctx) =>
  usesOption(args, { short: 'R', long: ['recursive'] })
    ? judged(2, `${ctx.name} -R changes permissions of a whole tree`)
    : judged(1, `${ctx.name} changes permissions`);

export const systemctlRule: Rule = (args) => {
  const verb = positionals(args)[0];
  const reads = /^(?:status|show|cat|list-.*|is-.*|get-default|help)$/;
  if (verb === undefined || reads.test(verb))
    return judged(0, 'systemctl only reads', { subcommand: verb ?? null });
  return judged(3, `systemctl ${verb} changes system services`, { subcommand: verb });
};

export const crontabRule: Rule = (args) =>
  args.length === 1 && args[0] === '-l'
    ? judged(0, 'crontab -l lists jobs')
    : judged(3, 'crontab changes scheduled jobs');

export const ipRule: Rule = (args) =>
  args.some((a) => /^(?:add|del|delete|set|flush|change|replace|append|prepend|exec)$/.test(a))
    ? judged(3, 'ip changes network settings')
    : judged(0, 'ip only shows');

export const sysctlRule: Rule = (args) =>
  usesOption(args, { short: 'wp', long: ['write', 'load', 'system'] }) || args.some((a) => a.includes('='))
    ? judged(3, 'sysctl changes kernel settings')
    : judged(0, 'sysctl only reads');

/** gh: reading lists and views asks once (network, private data); anything else changes GitHub. */
export function ghRule(args: string[]) {
  const [group, verb] = positionals(args);
  const subcommand = [group, verb].filter(Boolean).join(' ') || null;
  if (group === 'auth' && (verb === 'token' || args.includes('--show-token'))) {
    return judged(3, 'gh auth reveals a token', { subcommand });
  }
  if (group === 'api') {
    return usesOption(args, { short: 'XfF', long: ['method', 'field', 'raw-field', 'input'] })
      ? judged(3, 'gh api sends a request that can change things', { subcommand })
      : judged(2, 'gh api reads from GitHub', { subcommand });
  }
  if (verb === undefined || /^(?:list|view|status|diff|checks|search)$/.test(verb)) {
    return judged(1, 'gh reads from GitHub', { subcommand });
  }
  return judged(3, `gh ${subcommand} changes things on GitHub`, { subcommand });
}
