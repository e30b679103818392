// The jail `shell` runs in on the host. Without it a command runs as steward's user beside steward:
// `grep -r KEY /proc/[0-9]*/environ` reads steward's own tokens, and any file steward can write, the
// command can too. The jail gives the command its own PID namespace with a fresh /proc (steward's
// processes do not exist there), its own network namespace (loopback only) unless the call was
// approved as a network call, a read-only view of the system with only the workspace writable, a
// private /tmp, a minimal /dev, no capabilities, and nothing of steward's environment.
import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { type BashStatus, resolveBash } from './shell-dialect.ts';

export const HOST_JAIL_MODES = ['auto', 'required', 'off'] as const;
/** `auto`: jail when one is available, else run unjailed and say so; `required`: refuse unjailed. */
export type HostJailMode = (typeof HOST_JAIL_MODES)[number];
export const DEFAULT_HOST_JAIL_MODE: HostJailMode = 'auto';

/**
 * What the probe found. `bwrap` is the full jail. `unshare` (util-linux, when bubblewrap is missing)
 * isolates processes, /proc and the network and drops capabilities, but leaves the filesystem as it
 * is: files outside the workspace stay writable. `none` runs commands as steward's user on the host.
 */
export type JailStatus =
  | { kind: 'bwrap'; path: string }
  | { kind: 'unshare'; path: string; setpriv: string; reason: string }
  | { kind: 'none'; reason: string };

export interface JailSpec {
  /** Absolute real path of the workspace: bound read-write at the same path, the working directory. */
  workspace: string;
  /** Share the host's network; false gives a namespace with loopback only. */
  network: boolean;
  /** The complete environment of the command (the jail starts from an empty one). */
  env: Readonly<Record<string, string>>;
  /** Extra host paths bound read-only at the same place, e.g. a toolchain under /opt. */
  readOnly?: readonly string[];
}

/** System folders bound read-only when they exist; a missing one (no /lib32) is skipped. */
export const JAIL_SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/**
 * The parts of /etc a command needs (libraries, users, names, certificates, time zone), an allowlist:
 * /etc/shadow, SSH host keys, /etc/ssl/private, sudoers and steward's own config never appear.
 */
export const JAIL_ETC_ENTRIES = [
  'alternatives',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'passwd',
  'group',
  'nsswitch.conf',
  'hosts',
  'host.conf',
  'resolv.conf',
  'gai.conf',
  'services',
  'protocols',
  'ssl/certs',
  'ssl/openssl.cnf',
  'ca-certificates',
  'ca-certificates.conf',
  'localtime',
  'timezone',
  'mime.types',
  'magic',
  'magic.mime',
  'os-release',
  'debian_version',
  'gitconfig',
  'terminfo',
  'locale.alias',
] as const;

/**
 * Parts of /proc that uid 0 may write by file mode alone, capabilities or not: /proc/sys holds
 * host-wide settings (kernel.core_pattern names a program the kernel runs as root on the next crash),
 * /proc/sysrq-trigger reboots the machine. Steward should not run as root, but if it does, these are
 * read-only in the jail (what Docker does for a container).
 */
export const JAIL_PROC_READ_ONLY = ['sys', 'sysrq-trigger', 'fs', 'irq', 'bus', 'acpi', 'scsi'] as const;

/**
 * The bubblewrap options for one command, ending with `--`; the caller appends bash and its arguments.
 * Pure, so the table tests pin every mount and namespace.
 */
export function jailArgv(spec: JailSpec): string[] {
  const args: string[] = [
    '--unshare-all', // user (when possible), ipc, pid, net, uts, cgroup
    ...(spec.network ? ['--share-net'] : []),
    '--die-with-parent', // steward gone: the whole jail is SIGKILLed
    '--new-session', // no controlling terminal to inject keystrokes into (TIOCSTI)
    '--cap-drop',
    'ALL', // as root, bwrap would otherwise keep every capability (and could remount or mknod)
    '--clearenv',
  ];
  for (const dir of JAIL_SYSTEM_DIRS) args.push('--ro-bind-try', dir, dir);
  for (const entry of new Set(JAIL_ETC_ENTRIES)) args.push('--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`);
  for (const path of spec.readOnly ?? []) args.push('--ro-bind-try', path, path);
  args.push('--proc', '/proc');
  for (const entry of JAIL_PROC_READ_ONLY) args.push('--ro-bind-try', `/proc/${entry}`, `/proc/${entry}`);
  args.push('--dev', '/dev', '--tmpfs', '/tmp', '--dir', '/var/tmp');
  // After /tmp, so a workspace under /tmp is bound on top of the private tmpfs.
  args.push('--bind', spec.workspace, spec.workspace, '--chdir', spec.workspace);
  for (const [name, value] of Object.entries(spec.env)) args.push('--setenv', name, value);
  args.push('--');
  return args;
}

/**
 * Runs first inside the unshare namespaces, with their capabilities: makes the /proc parts above
 * read-only, then execs the rest of its argv (setpriv, which drops every capability, then bash). It
 * takes nothing from the command: the command is a later argv element it never parses.
 */
export const UNSHARE_SETUP_SCRIPT = [
  'set -e',
  // A PATH assignment here would reach the command through exec; look mount up without one.
  'mount=$(PATH=/usr/bin:/bin:/usr/sbin:/sbin command -v mount)',
  `for p in ${JAIL_PROC_READ_ONLY.join(' ')}; do`,
  '  if [ -e "/proc/$p" ]; then "$mount" --bind "/proc/$p" "/proc/$p"; "$mount" -o remount,bind,ro "/proc/$p"; fi',
  'done',
  'exec "$@"',
].join('\n');

/**
 * The util-linux fallback: new PID (with a fresh /proc), mount, network, IPC and UTS namespaces, the
 * child SIGKILLed when unshare dies; a setup step makes the writable parts of /proc read-only, then
 * setpriv drops every capability so root inside cannot unmount the fresh /proc to uncover the host's.
 * The environment is set by the caller's spawn. Ends at the command position (the caller appends bash
 * and its arguments).
 */
export function unshareArgv(
  spec: Omit<JailSpec, 'env'> & { bash: string; setpriv: string; asRoot: boolean },
): string[] {
  return [
    ...(spec.asRoot ? [] : ['--user', '--map-root-user']),
    '--pid',
    '--fork',
    '--kill-child',
    '--mount',
    '--mount-proc',
    '--propagation',
    'private',
    ...(spec.network ? [] : ['--net']),
    '--ipc',
    '--uts',
    '--',
    spec.bash,
    '--noprofile',
    '--norc',
    '-c',
    UNSHARE_SETUP_SCRIPT,
    'steward-jail-setup',
    spec.setpriv,
    '--bounding-set',
    '-all',
    '--inh-caps',
    '-all',
    '--ambient-caps',
    '-all',
    '--no-new-privs',
    '--',
  ];
}

function succeeds(file: string, args: string[], cwd: string): Promise<string | undefined> {
  return new Promise((done) => {
    execFile(file, args, { env: {}, cwd, timeout: 5_000 }, (error, _stdout, stderr) =>
      done(error ? String(stderr).trim().split('\n')[0] || error.message : undefined),
    );
  });
}

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface ProbeOptions {
  bash: string;
  /** A folder to try the jail in; the probe binds it like a workspace. Default /tmp. */
  workspace?: string;
  bwrapCandidates?: readonly string[];
  unshareCandidates?: readonly string[];
  setprivCandidates?: readonly string[];
  asRoot?: boolean;
}

/**
 * Which jail works here, tried for real (a kernel or an AppArmor profile may forbid the namespaces
 * even where the program exists). Run through `findHostShell`.
 */
export async function probeJail(options: ProbeOptions): Promise<JailStatus> {
  const workspace = options.workspace ?? '/tmp';
  const check = [options.bash, '--noprofile', '--norc', '-c', 'test -r /proc/1/stat'];
  let bwrapFailure = 'bubblewrap (bwrap) is not installed';
  for (const path of options.bwrapCandidates ?? ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap']) {
    if (!(await executable(path))) continue;
    const spec = { workspace, network: false, env: { PATH: '/usr/bin:/bin' } };
    const failure = await succeeds(path, [...jailArgv(spec), ...check], workspace);
    if (failure === undefined) return { kind: 'bwrap', path };
    bwrapFailure = `bubblewrap at ${path} cannot create namespaces here (${failure})`;
  }
  const setpriv = await firstExecutable(options.setprivCandidates ?? ['/usr/bin/setpriv', '/bin/setpriv']);
  for (const path of options.unshareCandidates ?? ['/usr/bin/unshare', '/bin/unshare']) {
    if (!setpriv || !(await executable(path))) continue;
    const asRoot = options.asRoot ?? process.getuid?.() === 0;
    const failure = await succeeds(
      path,
      [...unshareArgv({ workspace, network: false, bash: options.bash, setpriv, asRoot }), ...check],
      workspace,
    );
    if (failure === undefined) {
      return {
        kind: 'unshare',
        path,
        setpriv,
        reason: `${bwrapFailure}; util-linux unshare isolates processes and the network, but files outside the workspace stay writable`,
      };
    }
  }
  return { kind: 'none', reason: bwrapFailure };
}

async function firstExecutable(paths: readonly string[]): Promise<string | undefined> {
  for (const path of paths) if (await executable(path)) return path;
  return undefined;
}

/** One line for doctor and for the shell tool's refusal: which jail, or the cost of none and the fix. */
export function describeJail(status: JailStatus, mode: HostJailMode): string {
  if (mode === 'off') {
    return "sandbox.host_jail is off: shell runs unjailed on the host, so steward's own environment (its tokens and keys, via /proc) and files outside the workspace are readable and writable by commands; set it to auto";
  }
  if (status.kind === 'bwrap') {
    return `shell runs in a bubblewrap jail (${status.path}): own PID and network namespaces, only the workspace writable, no capabilities`;
  }
  const cost =
    status.kind === 'unshare'
      ? `shell runs in a partial jail (${status.reason})`
      : `shell runs unjailed on the host: steward's own environment (its tokens and keys, via /proc) and files outside the workspace are readable by commands (${status.reason})`;
  return `${cost}; install bubblewrap (apt-get install bubblewrap)`;
}

/**
 * bash and the host jail as they are on this machine: found once by the shell tool at its first
 * host call (finding them spawns processes, which start-up need not wait for), and by doctor.
 */
export async function findHostShell(mode: HostJailMode): Promise<{ bash: BashStatus; jail: JailStatus }> {
  const bash = await resolveBash();
  if (mode === 'off') return { bash, jail: { kind: 'none', reason: 'sandbox.host_jail is off' } };
  if (bash.kind !== 'ok') return { bash, jail: { kind: 'none', reason: 'bash is not usable' } };
  return { bash, jail: await probeJail({ bash: bash.path }) };
}
