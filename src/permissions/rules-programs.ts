// The classifier's table: every program it knows, by exact name, and the rule that scores it.
import { assignmentScore } from './assignments.ts';
import { fixed, judged, positionals, type Rule, type RuleContext, usesOption, worse } from './judgement.ts';
import { findRule } from './rules-find.ts';
import {
  chmodRule,
  compressorRule,
  crontabRule,
  fdRule,
  ghRule,
  ipRule,
  readOnlyUnless,
  readOnlyUpTo,
  rgRule,
  sysctlRule,
  systemctlRule,
  teeRule,
  unzipRule,
} from './rules-flags.ts';
import { gitRule } from './rules-git.ts';
import { interpreterRule, isInterpreter, isShell } from './rules-interpreters.ts';
import { jqRule } from './rules-jq.ts';
import { curlRule, hostsOf, wgetRule } from './rules-network.ts';
import { PACKAGE_RULES, PROJECT_RUNNERS, projectRunner } from './rules-packages.ts';
import { binutilsRule, READ_ONLY_TABLES } from './rules-readonly.ts';
import { awkRule, sedRule } from './rules-sed-awk.ts';
import { tarRule } from './rules-tar.ts';
import {
  ackRule,
  agRule,
  diff3Rule,
  fileRule,
  lessRule,
  manRule,
  opensslRule,
  pandocRule,
  sdiffRule,
  sortRule,
  splitRule,
} from './rules-tools.ts';
import { VAR_OPEN } from './shell-marks.ts';
import { isAssignment } from './shell-parse.ts';

const RULES = new Map<string, Rule>();
const define = (names: string, rule: Rule) => {
  for (const name of names.trim().split(/\s+/)) RULES.set(name, rule);
};

// ---- score 0: known read-only commands ----
define(
  `ls dir vdir cat tac nl head tail wc cut paste join comm tr fold fmt expand unexpand rev column od
   hexdump strings stat du df pwd echo printf true false test [ : cal ncal whoami id groups
   uname arch nproc locale tty who w users logname lsb_release getconf basename dirname realpath
   readlink seq sleep yes md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum
   base32 base64 basenc pgrep free uptime lscpu lsblk lsusb lspci lsof ss netstat getent which
   whereis type look numfmt factor tsort pr expr bc diff cmp grep egrep fgrep zgrep zegrep
   zfgrep zcat bzcat xzcat zstdcat lzcat cd pushd popd dirs unset set shopt wait jobs exit
   return break continue shift getopts ulimit umask times help read unalias logout fg
   bg disown caller lsattr getfacl nm objdump readelf size tput clear stty`,
  (_args, ctx) => judged(0, `${ctx.name} only reads`),
);
for (const [name, rule] of Object.entries(READ_ONLY_TABLES)) RULES.set(name, rule);
define('nm objdump readelf size strings', binutilsRule);
define('ps', (args) => {
  // BSD-style options come first and without a dash (`ps auxe`); `e` shows each process's environment.
  for (const a of args) {
    if (!/^[acefghjlmnrsuvwxCLSTXZ]+$/.test(a)) break;
    if (a.includes('e')) return judged(3, "ps e shows other processes' environment, which holds secrets");
  }
  return judged(0, 'ps only reads');
});
define('sort', sortRule);
define('jq', jqRule);
define('file', fileRule);
define('sdiff', sdiffRule);
define('diff3', diff3Rule);
define('split', splitRule);
define('openssl', opensslRule);
define('pandoc', pandocRule);
define('ag', agRule);
define('ack ack-grep', ackRule);
define('history', (args) =>
  args.every((a) => /^\d+$/.test(a))
    ? judged(0, 'history lists commands')
    : judged(1, 'history changes or writes the history list'),
);
define('ldd', fixed(3, "ldd runs the program's own loader, which can run its code"));
define('rg', rgRule);
define('find', findRule);
define('fd fdfind', fdRule);
define('tar', tarRule);
define('man', manRule);
define('tee', teeRule);
define('sed gsed', sedRule);
define('awk gawk mawk nawk busybox-awk', awkRule);
define('git', gitRule);
define('date', readOnlyUnless({ short: 's', long: ['set'] }, 3, 'sets the clock'));
define('tree', readOnlyUnless({ short: 'o' }, 3, 'writes a file'));
define('shuf iconv', readOnlyUnless({ short: 'o', long: ['output'] }, 3, 'overwrites a file'));
define('less more most', lessRule);
define('bat batcat', readOnlyUnless({ long: ['pager'] }, 3, 'runs a pager program'));
define(
  'journalctl',
  readOnlyUnless(
    {
      long: [
        'vacuum-size',
        'vacuum-time',
        'vacuum-files',
        'rotate',
        'flush',
        'sync',
        'relinquish-var',
        'setup-keys',
      ],
    },
    3,
    'changes the journal',
  ),
);
define('yq', (args, ctx) =>
  // load, load_str, load_xml… read any file the expression names, out of the guard's sight.
  args.some((a) => /\bload(?:_[a-z]+)?\s*\(|\bfrom_file\b/.test(a)) ||
  usesOption(args, { long: ['from-file', 'split-exp'], short: 's' })
    ? judged(3, 'yq loads or writes files its expression names')
    : readOnlyUnless({ short: 'i', long: ['inplace'] }, 2, 'edits files in place')(args, ctx),
);
define('mapfile readarray', readOnlyUnless({ short: 'C' }, 3, 'runs a callback command'));
define('compgen complete', readOnlyUnless({ short: 'CF' }, 3, 'runs a command'));
define('bind', readOnlyUnless({ short: 'x' }, 3, 'runs a command'));
define('hash', readOnlyUnless({ short: 'p' }, 3, 'maps a command name to another program'));
define('uniq', readOnlyUpTo(1, 'fsw', 'overwrites its OUTPUT file'));
define('xxd', readOnlyUpTo(1, 'cglnosS', 'writes its outfile'));
define('hostname', (args) =>
  positionals(args).length > 0 || usesOption(args, { short: 'Fb', long: ['file', 'boot'] })
    ? judged(3, 'hostname sets the host name')
    : judged(0, 'hostname only reads'),
);
define('systemctl', systemctlRule);
define('crontab', crontabRule);
define('ip', ipRule);
define('sysctl', sysctlRule);

// ---- score 1–2: changes the owner can allow for a session ----
define('printenv', fixed(1, '$0 prints environment variables'));
define('ping ping6 dig host nslookup traceroute tracepath whois', (args, ctx) =>
  judged(1, `${ctx.name} reaches the network`, {
    network: lookupHosts(positionals(args, 'cisWtfpqQlmhbrTe')),
  }),
);
define('mkdir touch mktemp mkfifo', fixed(1, '$0 creates files or folders'));
define('chmod', chmodRule);
define('mv', fixed(2, 'mv moves or overwrites files'));
define('cp', fixed(2, 'cp copies over files'));
define('ln', fixed(2, 'ln creates or replaces links'));
define('install rename csplit setfacl', fixed(2, '$0 writes files'));
define('patch cpio', fixed(3, '$0 writes the files its input names, which the classifier cannot see'));
define('7z 7za 7zr', (args) => {
  const verb = positionals(args)[0] ?? '';
  if (verb === 'l' || verb === 't' || verb === 'i' || verb === 'h')
    return judged(0, '7z only lists', { subcommand: verb });
  if (verb === 'x' || verb === 'e') return judged(3, '7z extracts over existing files', { subcommand: verb });
  return judged(2, `7z ${verb} changes an archive`, { subcommand: verb || null });
});
define('zip', (args) =>
  usesOption(args, { long: ['unzip-command'] }) || args.includes('-TT')
    ? judged(3, 'zip -TT runs a command')
    : judged(2, 'zip writes an archive'),
);
define('kill', (args) =>
  positionals(args).some((a) => a === '-1' || a === '0') || args.includes('-1')
    ? judged(3, 'kill -1 signals every process it can, steward included')
    : judged(2, 'kill signals processes'),
);
define('pkill killall skill renice', fixed(2, '$0 signals processes'));
define('chown chgrp', fixed(2, '$0 changes ownership'));
define(
  'gzip gunzip bzip2 bunzip2 xz unxz lzma unlzma zstd unzstd lz4 pigz compress uncompress',
  compressorRule,
);
define('unzip', unzipRule);
define('curl', curlRule);
define('wget', wgetRule);

// ---- score 3: destroys, overwrites, publishes, escalates or hides what runs ----
define('rm', fixed(3, 'rm deletes files'));
define('rmdir', fixed(3, 'rmdir deletes folders'));
define('shred unlink srm wipe', fixed(3, '$0 deletes files'));
define('truncate', fixed(3, 'truncate cuts files short'));
define('dd', fixed(3, 'dd writes raw data over files or devices'));
define(
  `mke2fs mkswap fdisk sfdisk cfdisk parted wipefs blkdiscard hdparm mount umount swapon swapoff
   losetup`,
  fixed(3, '$0 changes disks or filesystems'),
);
define('sudo doas pkexec su runuser sg newgrp setpriv capsh', fixed(3, '$0 runs commands as another user'));
define(
  'chroot nsenter unshare systemd-run firejail bwrap proot fakeroot',
  fixed(3, '$0 runs a command in another environment'),
);
define(
  `docker podman nerdctl buildah docker-compose kubectl helm minikube kind terraform ansible
   ansible-playbook vagrant`,
  fixed(3, '$0 manages containers or infrastructure'),
);
define('reboot shutdown halt poweroff init telinit service', fixed(3, '$0 stops or changes the system'));
define('iptables ip6tables nft ufw firewall-cmd', fixed(3, '$0 changes the firewall'));
define(
  'useradd userdel usermod groupadd groupdel groupmod passwd chpasswd chage visudo vipw',
  fixed(3, '$0 changes user accounts'),
);
define('modprobe insmod rmmod chattr', fixed(3, '$0 changes the system'));
define(
  'ssh sshpass mosh scp sftp ftp rsync rclone nc ncat netcat socat telnet',
  fixed(3, '$0 connects to or copies to other machines'),
);
define('at batch', fixed(3, '$0 schedules commands'));
define(
  'watch parallel flock strace ltrace valgrind gdb script tmux screen entr',
  fixed(3, '$0 runs other commands'),
);
define(
  'vi vim nvim view nano emacs ed ex pico micro joe',
  fixed(3, '$0 is an editor that can write files and run commands'),
);
define('open xdg-open', fixed(3, '$0 opens files with other programs'));
define('dc', fixed(3, 'dc runs shell commands with !'));
// Programs with an interpreter or a shell escape of their own: what they run is not visible.
define(
  `sqlite3 sqlite duckdb psql mysql mariadb mongo mongosh redis-cli cqlsh m4 gnuplot octave maxima gp
   sage ghci runghc scala kotlin clojure guile racket sbcl clisp ocaml erl elixir iex gforth bb nu
   elvish xonsh ipython jupyter qjs jjs rhino emacsclient mg kak hx red`,
  fixed(3, '$0 runs code or shell commands of its own (an embedded interpreter or ! escape)'),
);
define(
  `tex latex pdflatex xelatex lualatex luatex context groff troff nroff gs ghostscript convert magick
   mogrify ffmpeg nmap tcpdump gpg gpg2 mail mailx sendmail mutt gcc g++ cc c++ clang clang++ javac
   ld rustc tsc`,
  fixed(3, '$0 can run programs or write files its options and input choose'),
);
define('eval', (args) =>
  judged(3, 'opaque command (eval runs a string as a command)', { nested: [args.join(' ')] }),
);
define('source .', fixed(3, 'opaque command ($0 runs a script the classifier cannot see)'));
define('exec', fixed(3, 'opaque command (exec replaces the shell)'));
define('fc', fixed(3, 'fc re-runs commands from history'));
define('enable', fixed(3, 'enable loads or switches shell builtins'));
define('trap', (args) =>
  args.length === 0 || usesOption(args, { short: 'lp' })
    ? judged(0, 'trap lists traps')
    : judged(3, 'opaque command (trap runs a command string later)'),
);
define('alias', (args) =>
  args.some((a) => a.includes('='))
    ? judged(3, 'opaque command (defines an alias)')
    : judged(0, 'alias lists aliases'),
);
define('gh', ghRule);
define('let', fixed(3, 'opaque command (let evaluates names as arithmetic, which can run commands)'));
define('[[', (args) =>
  args.some((a) => /^-(?:eq|ne|lt|le|gt|ge)$/.test(a)) && args.some((a) => a.includes(VAR_OPEN))
    ? judged(3, 'opaque command ([[ compares a variable as arithmetic, which can run commands)')
    : judged(0, '[[ only tests'),
);
define('export declare typeset local readonly', (args, ctx) => {
  if (ctx.name !== 'export' && usesOption(args, { short: 'in' })) {
    return judged(3, `opaque command (${ctx.name} -i or -n makes later assignments evaluate code)`);
  }
  return args
    .filter(isAssignment)
    .map((a) => assignmentScore(a.slice(0, a.search(/\+?=|\[/))))
    .reduce(worse, judged(0, `${ctx.name} sets variables`));
});
for (const [name, rule] of Object.entries(PACKAGE_RULES)) RULES.set(name, rule);
for (const name of PROJECT_RUNNERS) RULES.set(name, () => projectRunner(name));

/** Words that, passed to an unknown program, suggest it runs them (flock x rm …). */
const RUNNABLE = new Set([
  'rm',
  'dd',
  'shred',
  'truncate',
  'sudo',
  'doas',
  'su',
  'eval',
  'exec',
  'xargs',
  'env',
  'git',
  'mv',
  'chmod',
  'chown',
  'kill',
  'curl',
  'wget',
  'docker',
]);

/** Hosts named by a lookup tool's operands (ping host, dig @server name); null if none parse. */
function lookupHosts(operands: string[]): { hosts: string[] } | null {
  const hosts = hostsOf(operands.map((o) => o.replace(/^@/, '')).filter((o) => !/^[+-]/.test(o)));
  return hosts ? { hosts } : null;
}

export function ruleFor(name: string): Rule | undefined {
  const rule = RULES.get(name);
  if (rule) return rule;
  if (isShell(name) || isInterpreter(name)) return interpreterRule;
  if (/^mkfs(?:\..+)?$/.test(name)) return fixed(3, '$0 formats a filesystem');
  return undefined;
}

export function unknownRule(args: string[], ctx: RuleContext) {
  const runs = args
    .map((a) => a.replace(/^.*\//, ''))
    .find((a) => RUNNABLE.has(a) || isShell(a) || isInterpreter(a));
  const first = args[0];
  const subcommand = first !== undefined && /^[a-z][a-z0-9._-]*$/.test(first) ? first : null;
  if (runs)
    return judged(3, `${ctx.name} is not a known command and is given ${runs}, which it may run`, {
      subcommand,
    });
  return judged(2, `${ctx.name} is not a known command`, { subcommand });
}
