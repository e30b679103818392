// Pure tables for the jail's argv, the dialect's argv and environment, and which process runs.
import { describe, expect, it } from 'vitest';
import { checkHostShell } from '../src/doctor.ts';
import {
  describeJail,
  type JailStatus,
  jailArgv,
  probeJail,
  UNSHARE_SETUP_SCRIPT,
  unshareArgv,
} from '../src/sandbox/host-jail.ts';
import { bashArgs, dialectEnv, SHELL_DIALECT, safePath } from '../src/sandbox/shell-dialect.ts';
import { type InvocationInput, isolationNote, shellInvocation } from '../src/sandbox/shell-invocation.ts';

const WS = '/srv/steward/workspace';

/** The (option, operands) pairs of a bwrap argv, so tests read mounts without caring about order. */
function pairs(argv: string[]): Array<[string, ...string[]]> {
  const arity: Record<string, number> = {
    '--ro-bind-try': 2,
    '--bind': 2,
    '--setenv': 2,
    '--proc': 1,
    '--dev': 1,
    '--tmpfs': 1,
    '--dir': 1,
    '--chdir': 1,
    '--cap-drop': 1,
  };
  const out: Array<[string, ...string[]]> = [];
  for (let i = 0; i < argv.length; i++) {
    const option = argv[i] as string;
    const n = arity[option] ?? 0;
    out.push([option, ...argv.slice(i + 1, i + 1 + n)]);
    i += n;
  }
  return out;
}

describe('jailArgv', () => {
  const offline = jailArgv({ workspace: WS, network: false, env: { PATH: '/usr/bin', HOME: WS } });
  const online = jailArgv({ workspace: WS, network: true, env: {} });

  it.each([
    ['--unshare-all'],
    ['--die-with-parent'],
    ['--new-session'],
    ['--clearenv'],
    ['--cap-drop', 'ALL'],
    ['--proc', '/proc'],
    ['--dev', '/dev'],
    ['--tmpfs', '/tmp'],
    ['--chdir', WS],
    ['--setenv', 'PATH', '/usr/bin'],
    ['--setenv', 'HOME', WS],
    ['--ro-bind-try', '/usr', '/usr'],
    ['--ro-bind-try', '/etc/passwd', '/etc/passwd'],
    ['--ro-bind-try', '/etc/ssl/certs', '/etc/ssl/certs'],
    ['--ro-bind-try', '/proc/sys', '/proc/sys'],
    ['--ro-bind-try', '/proc/sysrq-trigger', '/proc/sysrq-trigger'],
  ])('offline holds %j', (...pair) => {
    expect(pairs(offline)).toContainEqual(pair);
  });

  it('shares the network only for a network call', () => {
    expect(offline).not.toContain('--share-net');
    expect(online).toContain('--share-net');
    expect(online.indexOf('--share-net')).toBeGreaterThan(online.indexOf('--unshare-all'));
  });

  it('the read-only /proc parts are bound after the fresh /proc, which would hide them', () => {
    const proc = offline.indexOf('/proc');
    expect(offline[proc - 1]).toBe('--proc');
    expect(offline.indexOf('/proc/sys')).toBeGreaterThan(proc);
  });

  it('the workspace is the only writable bind, and it comes after the private /tmp', () => {
    const writable = pairs(offline).filter(([option]) => option === '--bind');
    expect(writable).toEqual([['--bind', WS, WS]]);
    expect(offline.indexOf('--bind')).toBeGreaterThan(offline.indexOf('--tmpfs'));
  });

  it.each([
    '/',
    '/etc',
    '/etc/shadow',
    '/etc/gshadow',
    '/etc/ssh',
    '/etc/ssl',
    '/etc/ssl/private',
    '/etc/sudoers',
    '/etc/environment',
    '/root',
    '/home',
    '/run',
    '/var/run',
    '/proc',
    '/sys',
  ])('never binds the host %s', (path) => {
    const bound = pairs(offline)
      .filter(([option]) => option === '--ro-bind-try' || option === '--bind')
      .map(([, source]) => source);
    expect(bound).not.toContain(path);
  });

  it('extra read-only paths are read-only', () => {
    const argv = jailArgv({ workspace: WS, network: false, env: {}, readOnly: ['/opt/tool'] });
    expect(pairs(argv)).toContainEqual(['--ro-bind-try', '/opt/tool', '/opt/tool']);
    expect(pairs(argv).filter(([o]) => o === '--bind')).toHaveLength(1);
  });

  it('ends with -- so the command is never read as an option', () => {
    expect(offline.at(-1)).toBe('--');
    expect(offline.filter((a) => a === '--')).toHaveLength(1);
  });

  it('an env value that looks like an option stays a value', () => {
    const argv = jailArgv({ workspace: WS, network: false, env: { X: '--bind' } });
    expect(pairs(argv)).toContainEqual(['--setenv', 'X', '--bind']);
    expect(pairs(argv).filter(([o]) => o === '--bind')).toHaveLength(1);
  });
});

describe('unshareArgv', () => {
  it.each([
    [
      { network: false, asRoot: true },
      ['--pid', '--fork', '--kill-child', '--mount-proc', '--net'],
      ['--user'],
    ],
    [{ network: true, asRoot: true }, ['--pid', '--mount-proc'], ['--net', '--user']],
    [{ network: false, asRoot: false }, ['--user', '--map-root-user', '--net'], []],
  ])('%j', (flags, present, absent) => {
    const argv = unshareArgv({ workspace: WS, bash: '/usr/bin/bash', setpriv: '/usr/bin/setpriv', ...flags });
    for (const flag of present) expect(argv).toContain(flag);
    for (const flag of absent) expect(argv).not.toContain(flag);
    // The setup script runs first (the /proc covers), then setpriv drops every capability, and the
    // argv ends at the command slot.
    const setup = argv.indexOf('--', argv.indexOf('--uts'));
    expect(argv.slice(setup + 1, setup + 7)).toEqual([
      '/usr/bin/bash',
      '--noprofile',
      '--norc',
      '-c',
      UNSHARE_SETUP_SCRIPT,
      'steward-jail-setup',
    ]);
    const tail = argv.slice(argv.indexOf('/usr/bin/setpriv'));
    expect(tail).toEqual([
      '/usr/bin/setpriv',
      '--bounding-set',
      '-all',
      '--inh-caps',
      '-all',
      '--ambient-caps',
      '-all',
      '--no-new-privs',
      '--',
    ]);
  });
});

describe('bashArgs', () => {
  const argv = bashArgs("echo $'a' ; ls");

  it('reads no rc file and ends with -c and the command as one element', () => {
    expect(argv.slice(0, 2)).toEqual(['--noprofile', '--norc']);
    expect(argv.slice(-2)).toEqual(['-c', "echo $'a' ; ls"]);
  });

  it.each([
    ['+O', 'extglob'],
    ['+O', 'globstar'],
    ['+O', 'nocaseglob'],
    ['+O', 'dotglob'],
    ['+O', 'failglob'],
    ['+O', 'nullglob'],
    ['-O', 'globskipdots'],
    ['+O', 'expand_aliases'],
    ['+O', 'xpg_echo'],
    ['+o', 'histexpand'],
    ['+o', 'posix'],
    ['-o', 'braceexpand'],
  ])('fixes %s %s', (flag, name) => {
    const at = argv.indexOf(name);
    expect(at).toBeGreaterThan(0);
    expect(argv[at - 1]).toBe(flag);
  });

  it('states every option once, as SHELL_DIALECT lists it', () => {
    const count =
      Object.keys(SHELL_DIALECT.setOptions).length + Object.keys(SHELL_DIALECT.shoptOptions).length;
    expect(argv.length).toBe(2 + count * 2 + 2);
  });
});

describe('dialectEnv', () => {
  const hostile = {
    PATH: '/usr/bin:.:bin::/srv/steward/workspace/bin:/usr/local/bin',
    HOME: '/root',
    BASH_ENV: '/tmp/evil',
    ENV: '/tmp/evil',
    SHELLOPTS: 'xtrace',
    BASHOPTS: 'extglob',
    BASH_COMPAT: '3.2',
    'BASH_FUNC_ls%%': '() { rm -rf ~; }',
    GLOBIGNORE: '*',
    CDPATH: '/etc',
    IFS: 'x',
    POSIXLY_CORRECT: '1',
    LD_PRELOAD: '/tmp/evil.so',
    PS4: '$(rm -rf ~)',
    STEWARD_MODEL_API_KEY: 'sk-1',
    TERM: 'xterm-256color',
    LANG: 'en_US.UTF-8',
    LC_CTYPE: 'zh_TW.BIG5',
    LC_TIME: 'de_DE.utf8',
    LC_ALL: 'C',
    TZ: 'Europe/Berlin',
  };
  const env = dialectEnv(hostile, WS);

  it('keeps only the allowlist', () => {
    expect(env).toEqual({
      PATH: '/usr/bin:/usr/local/bin',
      HOME: WS,
      LANG: 'en_US.UTF-8',
      LC_TIME: 'de_DE.utf8',
      LC_ALL: 'C',
      TZ: 'Europe/Berlin',
      TERM: 'dumb',
    });
  });

  it.each([
    ['zh_TW.BIG5', 'C.UTF-8'],
    ['zh_CN.GBK', 'C.UTF-8'],
    ['ja_JP.SJIS', 'C.UTF-8'],
    ['en_US.UTF-8', 'en_US.UTF-8'],
    ['C', 'C'],
    ['', 'C.UTF-8'],
  ])('LANG %j becomes %j: a multibyte charset could swallow a backslash', (lang, want) => {
    expect(dialectEnv({ LANG: lang }, WS).LANG).toBe(want);
  });

  it.each([
    ['.', '/usr/local/bin:/usr/bin:/bin'],
    ['', '/usr/local/bin:/usr/bin:/bin'],
    [`${WS}:${WS}/node_modules/.bin`, '/usr/local/bin:/usr/bin:/bin'],
    ['/usr/bin:/usr/bin', '/usr/bin'],
    [`/srv/steward/workspace2:/bin`, '/srv/steward/workspace2:/bin'],
  ])('PATH %j becomes %j', (path, want) => {
    expect(safePath(path, WS)).toBe(want);
  });

  it.each([
    'BASH_ENV',
    'BASH_FUNC_ls%%',
    'BASHOPTS',
    'ENV',
    'IFS',
    'LD_PRELOAD',
    'LD_LIBRARY_PATH',
    'PATH',
    'HOME',
    'LC_ALL',
    'PS4',
    'A-B',
    '',
  ])('extraEnv may not set %j', (name) => {
    expect(() => dialectEnv({}, WS, { [name]: 'x' })).toThrow(/extraEnv may not set/);
  });

  it('extraEnv adds ordinary names', () => {
    const extra = { GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };
    expect(dialectEnv({}, WS, extra)).toMatchObject(extra);
  });
});

describe('shellInvocation', () => {
  const bwrap: JailStatus = { kind: 'bwrap', path: '/usr/bin/bwrap' };
  const unshare: JailStatus = {
    kind: 'unshare',
    path: '/usr/bin/unshare',
    setpriv: '/usr/bin/setpriv',
    reason: 'r',
  };
  const none: JailStatus = { kind: 'none', reason: 'bubblewrap (bwrap) is not installed' };
  const base: InvocationInput = {
    bash: { kind: 'ok', path: '/usr/bin/bash', version: '5.2.15(1)-release' },
    jail: bwrap,
    mode: 'auto',
    command: 'ls',
    workspace: WS,
    network: false,
    env: { PATH: '/usr/bin' },
    asRoot: true,
  };

  it.each([
    ['auto', bwrap, 'run', '/usr/bin/bwrap', 'bwrap'],
    ['auto', unshare, 'run', '/usr/bin/unshare', 'unshare'],
    ['auto', none, 'run', '/usr/bin/bash', 'none'],
    ['off', bwrap, 'run', '/usr/bin/bash', 'none'],
    ['required', bwrap, 'run', '/usr/bin/bwrap', 'bwrap'],
    ['required', unshare, 'refused', undefined, undefined],
    ['required', none, 'refused', undefined, undefined],
  ] as const)('mode %s with %o: %s %s', (mode, jail, kind, file, isolation) => {
    const got = shellInvocation({ ...base, mode, jail });
    expect(got.kind).toBe(kind);
    if (got.kind === 'run') {
      expect(got.file).toBe(file);
      expect(got.isolation).toBe(isolation);
      expect(got.args.slice(-2)).toEqual(['-c', 'ls']);
    } else {
      expect(got.reason).toMatch(/sandbox.host_jail is required/);
    }
  });

  it('bwrap itself gets an empty environment; the command gets it through --setenv', () => {
    const got = shellInvocation(base);
    expect(got.kind === 'run' && got.env).toEqual({});
    expect(got.kind === 'run' && got.args).toContain('--setenv');
  });

  it.each([
    [{ kind: 'missing', reason: 'shell needs bash 5.2+' }],
    [{ kind: 'too_old', path: '/bin/bash', version: '5.1.16', reason: 'shell needs bash 5.2 or newer' }],
  ] as const)('refuses without a usable bash: %o', (bash) => {
    expect(shellInvocation({ ...base, bash, mode: 'off' })).toEqual({ kind: 'refused', reason: bash.reason });
  });

  it('notes less than the full jail, except when the operator turned it off', () => {
    expect(isolationNote('bwrap', 'auto')).toBe('');
    expect(isolationNote('none', 'off')).toBe('');
    expect(isolationNote('none', 'auto')).toMatch(/unjailed/);
    expect(isolationNote('unshare', 'auto')).toMatch(/partial/);
  });
});

describe('describeJail and probeJail', () => {
  it.each([
    [{ kind: 'bwrap', path: '/usr/bin/bwrap' }, 'auto', /bubblewrap jail/],
    [
      { kind: 'none', reason: 'x' },
      'auto',
      /unjailed on the host: steward's own environment.*install bubblewrap/,
    ],
    [
      { kind: 'unshare', path: 'u', setpriv: 's', reason: 'writable' },
      'auto',
      /partial jail.*install bubblewrap/,
    ],
    [{ kind: 'bwrap', path: '/usr/bin/bwrap' }, 'off', /host_jail is off: shell runs unjailed/],
  ] as const)('%o in %s', (status, mode, want) => {
    expect(describeJail(status, mode)).toMatch(want);
  });

  it('finds nothing where no candidate exists, and says what to install', async () => {
    const status = await probeJail({
      bash: '/usr/bin/bash',
      bwrapCandidates: ['/nonexistent/bwrap'],
      unshareCandidates: ['/nonexistent/unshare'],
    });
    expect(status).toEqual({ kind: 'none', reason: 'bubblewrap (bwrap) is not installed' });
  });

  it('falls back to unshare when bubblewrap is missing', async () => {
    const status = await probeJail({ bash: '/usr/bin/bash', bwrapCandidates: [] });
    expect(status.kind).toBe('unshare');
  });
});

describe('doctor: the shell line', () => {
  const bash = { kind: 'ok', path: '/usr/bin/bash', version: '5.2.15(1)-release' } as const;
  const bwrap: JailStatus = { kind: 'bwrap', path: '/usr/bin/bwrap' };
  const none: JailStatus = { kind: 'none', reason: 'bubblewrap (bwrap) is not installed' };
  it.each([
    [
      bwrap,
      'auto',
      false,
      'ok',
      /bash 5.2.15\(1\)-release at \/usr\/bin\/bash; shell runs in a bubblewrap jail/,
    ],
    [bwrap, 'auto', true, 'warn', /steward runs as root: run it as an ordinary user/],
    [none, 'auto', false, 'warn', /unjailed on the host: steward's own environment .* install bubblewrap/],
    [none, 'required', false, 'fail', /install bubblewrap/],
    [bwrap, 'off', false, 'warn', /host_jail is off/],
  ] as const)('%o %s root=%s: %s', (jail, mode, root, status, detail) => {
    const result = checkHostShell(bash, jail, mode, root);
    expect(result.status).toBe(status);
    expect(result.detail).toMatch(detail);
  });

  it('fails without a usable bash', () => {
    const reason = 'shell needs bash 5.2 or newer (for globskipdots); /bin/bash is 5.1.16: upgrade bash';
    expect(
      checkHostShell({ kind: 'too_old', path: '/bin/bash', version: '5.1.16', reason }, bwrap, 'auto'),
    ).toEqual({
      status: 'fail',
      detail: reason,
    });
  });
});
