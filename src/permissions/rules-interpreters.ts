// Shells and interpreters: whatever they run (a -c string, a script, a pipe, a here-document) is
// invisible to the classifier, so they always ask; only `--version` and `--help` run freely.
import { judged, type RuleContext } from './judgement.ts';

const SHELLS = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'ash',
  'fish',
  'csh',
  'tcsh',
  'yash',
  'rbash',
  'posh',
]);
const INTERPRETERS = new Set(
  `python python2 python3 pypy pypy3 node nodejs deno perl ruby irb php lua luajit tclsh wish Rscript R
   julia osascript pwsh powershell groovy jshell java swift expect`.split(/\s+/),
);
const VERSIONED = /^(?:python|pypy|perl|ruby|php|lua|node)[0-9.]+$/;
const ONE_LINER = /^-(?:c|e|E|r|p|-eval|-print|-command|-exec)$/;

export const isShell = (name: string): boolean => SHELLS.has(name);
export const isInterpreter = (name: string): boolean => INTERPRETERS.has(name) || VERSIONED.test(name);

export function interpreterRule(args: string[], ctx: RuleContext) {
  const { name } = ctx;
  if (
    !ctx.piped &&
    !ctx.heredoc &&
    args.length === 1 &&
    /^(?:--version|-V|--help)$/.test(args[0] as string)
  ) {
    return judged(0, `${name} prints its version or help`);
  }
  const nested: string[] = [];
  let flag: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (ONE_LINER.test(a) || (isShell(name) && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(a))) {
      flag = a;
      if (isShell(name)) {
        const script = args.slice(i + 1).find((x) => !x.startsWith('-'));
        if (script !== undefined) nested.push(script);
      }
      break;
    }
  }
  if (isShell(name) && ctx.heredoc) nested.push(ctx.heredoc.body);
  const extra = nested.length > 0 ? { nested } : {};
  if (flag) return judged(3, `opaque command (${name} ${flag}): the classifier cannot see what runs`, extra);
  if (ctx.piped) return judged(3, `pipes into ${name}, which runs whatever it is fed`, extra);
  if (ctx.heredoc) return judged(3, `a here-document feeds ${name}, which runs it`, extra);
  return judged(3, `${name} runs a script or code the classifier cannot see`, extra);
}
