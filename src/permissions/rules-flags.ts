// Commands that are read-only until a flag makes them execute or write: rg, fd, tee, compressors
// and a few more. GNU long options count by unique prefix too. (find, tar, curl, wget, sort, man and
// the other tools with option tables have files of their own.)
import { isQuietTarget, type Judgement, judged, positionals, type Rule, usesOption } from './judgement.ts';

export function fdRule(args: string[]): Judgement {
  const exec = usesOption(args, { short: 'xX', long: ['exec', 'exec-batch'] });
  return exec ? judged(3, `fd ${exec} runs a command on every match`) : judged(0, 'fd only lists');
}

export function rgRule(args: string[]): Judgement {
  if (usesOption(args, { long: ['pre', 'hostname-bin'], safe: ['pre-glob'] }))
    return judged(3, 'rg --pre or --hostname-bin runs a program');
  if (usesOption(args, { short: 'z', long: ['search-zip'] }))
    return judged(2, 'rg -z runs decompression programs');
  return judged(0, 'rg only searches');
}

export function teeRule(args: string[]): Judgement {
  const files = positionals(args).filter((f) => !isQuietTarget(f));
  if (files.length === 0) return judged(0, 'tee only prints');
  if (usesOption(args, { short: 'a', long: ['append'] })) return judged(2, `tee -a appends to ${files[0]}`);
  return judged(3, `tee overwrites ${files[0]}`);
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

const GH_GROUPS = new Set(
  `pr issue repo release run workflow gist label org project search secret variable cache ruleset
   ssh-key gpg-key attestation status auth`.split(/\s+/),
);

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
  // Anything else may be an alias (`!sh …`) or an extension, both from ~/.config and ~/.local,
  // which are the workspace; browse opens a browser.
  if (group === undefined) return judged(0, 'gh prints its version or help', { subcommand });
  if (!GH_GROUPS.has(group))
    return judged(3, `gh ${group} may be an alias or extension that runs anything`, { subcommand });
  if (verb === undefined || /^(?:list|view|status|diff|checks|search)$/.test(verb)) {
    return judged(1, 'gh reads from GitHub', { subcommand });
  }
  return judged(3, `gh ${subcommand} changes things on GitHub`, { subcommand });
}
