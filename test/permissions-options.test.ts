// Option parsing as each program reads its argv, the git and HOME safety helpers, and what a
// judgement tells a grant (network hosts, unknown programs' exact key). The property tests check
// that spelling a dangerous option another way never lowers its score, that an unknown option
// never runs without asking, and that wrappers consume their options' values.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  GIT_SAFETY_CONFIG,
  gitSafetyArgs,
  gitSafetyEnv,
  isGitControlPath,
} from '../src/permissions/git-safety.ts';
import { isHomeConfigPath, shellSafetyEnv } from '../src/permissions/home-config.ts';
import { analyzeShell, judgeShell } from '../src/permissions/judge-shell.ts';
import { type OptionTable, parseArgs, resolveLong } from '../src/permissions/options.ts';
import { hostsOf } from '../src/permissions/rules-network.ts';

const WS = '/srv/steward/workspace';
const score = (command: string) => judgeShell(command, WS).score;

describe('parseArgs', () => {
  const t: OptionTable = {
    short: { q: 'quiet', O: 'output', n: 'count' },
    long: { quiet: 'flag', output: 'value', count: 'value', 'output-dir': 'value', color: 'optional' },
    abbreviate: true,
  };
  it.each([
    [['-qO', 'f'], 'output', 'f'],
    [['-qOf'], 'output', 'f'],
    [['--output=f'], 'output', 'f'],
    [['--output', 'f'], 'output', 'f'],
    [['--output-d=f'], 'output-dir', 'f'],
    [['-n5'], 'count', '5'],
  ])('%j gives %s=%s', (args, name, value) => {
    expect(parseArgs(args, t).options.find((o) => o.name === name)?.value).toBe(value);
  });
  it('reports unknown and ambiguous options, never skips them', () => {
    expect(parseArgs(['--outp=x', '-z', '--nope'], t).unknown).toEqual(['--outp=x', '-z', '--nope']);
    expect(resolveLong(t, 'out')).toBeUndefined();
    expect(resolveLong(t, 'outpu')).toBeUndefined();
    expect(resolveLong(t, 'output')).toBe('output');
  });
  it('takes a value word even when it looks like an option', () => {
    expect(parseArgs(['-O', '--quiet', 'x'], t)).toMatchObject({ operands: ['x'], unknown: [] });
  });
  it('stops at the first operand when options do not permute', () => {
    const parsed = parseArgs(['-q', 'cmd', '-O', 'x'], { ...t, permute: false });
    expect(parsed.rest).toBe(1);
    expect(parsed.options).toHaveLength(1);
  });
  it('an optional value is only ever attached', () => {
    expect(parseArgs(['--color', 'x'], t).operands).toEqual(['x']);
    expect(parseArgs(['--color=never'], t).options[0]?.value).toBe('never');
  });
});

describe('git safety', () => {
  it('puts its configuration after entries already in the environment', () => {
    const env = gitSafetyEnv({ GIT_CONFIG_COUNT: '2' });
    expect(env.GIT_CONFIG_COUNT).toBe(String(2 + GIT_SAFETY_CONFIG.length));
    expect(env.GIT_CONFIG_KEY_2).toBe('safe.bareRepository');
    expect(env.GIT_CONFIG_VALUE_2).toBe('explicit');
    expect(env.GIT_CONFIG_KEY_0).toBeUndefined();
  });
  it('starts at 0 and neutralises the executing keys', () => {
    const env = gitSafetyEnv();
    const pairs = Object.fromEntries(
      GIT_SAFETY_CONFIG.map((_, k) => [env[`GIT_CONFIG_KEY_${k}`], env[`GIT_CONFIG_VALUE_${k}`]]),
    );
    expect(pairs).toMatchObject({
      'safe.bareRepository': 'explicit',
      'core.fsmonitor': 'false',
      'core.hooksPath': '/dev/null',
      'core.pager': 'cat',
      'credential.helper': '',
      'protocol.ext.allow': 'never',
    });
    expect(env).toMatchObject({
      GIT_NO_REPLACE_OBJECTS: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_PAGER: 'cat',
    });
  });
  it('ignores a nonsense count rather than overwriting from 0 twice', () => {
    expect(gitSafetyEnv({ GIT_CONFIG_COUNT: 'x' }).GIT_CONFIG_KEY_0).toBe('safe.bareRepository');
  });
  it('gives the same configuration as -c arguments', () => {
    const args = gitSafetyArgs();
    expect(args.filter((a) => a === '-c')).toHaveLength(GIT_SAFETY_CONFIG.length);
    expect(args).toContain('core.fsmonitor=false');
  });
  it('shellSafetyEnv adds curl, wget, less and bat', () => {
    expect(shellSafetyEnv()).toMatchObject({ CURL_HOME: '/dev/null', WGETRC: '/dev/null', LESSSECURE: '1' });
  });
  it.each([
    ['.git/config', true],
    ['sub/.git', true],
    ['a/.GIT/hooks/x', true],
    ['.git./config', true],
    ['GIT~1/config', true],
    ['.gitattributes', true],
    ['x/.gitmodules', true],
    ['.gitconfig', true],
    ['.config/git/attributes', true],
    ['.github/workflows/x.yml', false],
    ['src/git.ts', false],
    ['notes.git.md', false],
  ])('isGitControlPath(%j) is %s', (path, expected) => expect(isGitControlPath(path)).toBe(expected));
  it.each([
    ['.curlrc', true],
    ['.ssh/config', true],
    ['sub/.wgetrc', true],
    ['.config/anything', true],
    ['.env.example', false],
    ['notes/a.md', false],
  ])('isHomeConfigPath(%j) is %s', (path, expected) => expect(isHomeConfigPath(path)).toBe(expected));
});

describe('hostsOf', () => {
  it.each([
    ['https://Example.com/x', ['example.com']],
    ['example.com', ['example.com']],
    ['http://[::1]:80/', ['[::1]']],
    ['https://x.com.:443/p', ['x.com']],
    ['http://a@b', null],
    ['http://a\\@b/', null],
    ['https://{a,b}.c', null],
    ['https://a%2eb', null],
  ])('%j → %j', (url, hosts) => expect(hostsOf([url])).toEqual(hosts));
});

/** The judgement of the one segment a command has. */
const segment = (command: string) => analyzeShell(command, WS).classification.segments[0];

describe('what a judgement gives a grant', () => {
  it('network programs carry the hosts they reach', () => {
    expect(segment('curl -s https://api.example.com/v1')?.network).toEqual({ hosts: ['api.example.com'] });
    expect(segment('wget -qO- http://a.example/x')?.network).toEqual({ hosts: ['a.example'] });
    expect(segment('git clone git@github.com:a/b.git')?.network).toEqual({
      hosts: ['github.com'],
      remotes: [],
    });
    expect(segment('git fetch origin')?.network).toEqual({ hosts: [], remotes: ['origin'] });
    expect(segment('ping -c 1 example.org')?.network).toEqual({ hosts: ['example.org'] });
  });
  it('an unparseable destination allows no grant', () => {
    expect(segment('curl http://user@evil')?.network).toBeNull();
    expect(segment('wget -i list')?.network).toBeNull();
  });
  it('programs off the network carry none', () => {
    expect(segment('mv a b')?.network).toBeUndefined();
  });
  it('unknown programs are keyed on their exact arguments', () => {
    expect(segment('mystery-tool --flag x')).toMatchObject({
      known: false,
      grantKey: JSON.stringify(['mystery-tool', '--flag', 'x']),
    });
    expect(segment('mv a b')?.known).toBeUndefined();
    expect(segment('timeout 5 mystery-tool x')).toMatchObject({ program: 'mystery-tool', known: false });
    expect(segment('find . -exec mystery-tool {} +')).toMatchObject({
      known: false,
      grantKey: JSON.stringify(['find', '.', '-exec', 'mystery-tool', '{}', '+']),
    });
  });
});

/** [program prefix, harmless short flags, the dangerous option: short letter, long name, value, rest]. */
const DANGEROUS: Array<[string, string, string, string, string, string]> = [
  ['wget', 'qvck', 'O', 'output-document', 'out', 'http://x'],
  ['wget', 'qv', 'o', 'output-file', 'log', 'http://x'],
  ['curl', 'sSfL', 'o', 'output', 'out', 'https://x'],
  ['curl', 'sSfL', 'D', 'dump-header', 'h', 'https://x'],
  ['curl', 'sS', 'c', 'cookie-jar', 'j', 'https://x'],
  ['sort', 'unr', 'o', 'output', 'out', 'f'],
  ['tar', 'tvz', 'I', 'use-compress-program', 'sh', '-f a.tar'],
  ['sdiff', 'iEb', 'o', 'output', 'out', 'a b'],
  ['less', 'NSR', 'O', 'LOG-FILE', 'log', 'f'],
  ['man', 'a', 'P', 'pager', 'sh', 'ls'],
];

const uniquePrefixes = (name: string, all: string[]) =>
  Array.from({ length: name.length }, (_, k) => name.slice(0, k + 1)).filter(
    (p) => p.length >= 3 && all.filter((n) => n.startsWith(p)).length === 1,
  );

describe('property: spelling a dangerous option another way never lowers its score', () => {
  for (const [program, harmless, letter, long, value, rest] of DANGEROUS) {
    it(`${program} ${long}`, () => {
      const forms = [
        (flags: string) => `-${flags}${letter} ${value}`,
        (flags: string) => `-${flags}${letter}${value}`,
        (flags: string) => `${flags ? `-${flags} ` : ''}--${long}=${value}`,
        (flags: string) => `${flags ? `-${flags} ` : ''}--${long} ${value}`,
      ];
      fc.assert(
        fc.property(
          fc.subarray([...harmless]),
          fc.integer({ min: 0, max: forms.length - 1 }),
          fc.boolean(),
          (flags, form, dangerFirst) => {
            const option = (forms[form] as (f: string) => string)(flags.join(''));
            const command = dangerFirst ? `${program} ${option} ${rest}` : `${program} ${rest} ${option}`;
            // tar and man take options after operands too (GNU permutation).
            return score(command) === 3;
          },
        ),
        { numRuns: 60 },
      );
    });
  }
  it('abbreviations of GNU long options count as the full name', () => {
    const cases: Array<[string, string, string[]]> = [
      ['wget --PREFIX=out http://x', 'output-document', ['output-document', 'output-file']],
      ['sort --PREFIX=sh f', 'compress-program', ['compress-program']],
      ['tar -tf a.tar --PREFIX=sh', 'to-command', ['to-command', 'totals']],
      ['sed --PREFIX="1e id" f', 'expression', ['expression']],
    ];
    for (const [template, name, all] of cases) {
      for (const prefix of uniquePrefixes(name, all))
        expect(score(template.replace('PREFIX', prefix))).toBe(3);
    }
  });
});

/** Commands that run without asking or ask at most 2, and accept options before their operands. */
const TABLED = [
  'ls -la src',
  'cat -n f',
  'grep -rn foo src',
  'head -n 5 f',
  'du -sh .',
  'sort -u f',
  'tar -tf a.tar',
  "jq -r '.a' f",
  "sed -n '1p' f",
  "awk '{print}' f",
  'less -R f',
  'man ls',
  'curl -s https://x',
  'wget -qO- http://x',
  'sdiff a b',
  'file f',
];

describe('property: an unknown option never runs without asking', () => {
  it('inserting --zq… first or last gives at least 1', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...TABLED),
        fc.stringMatching(/^[a-z]{0,6}$/),
        fc.boolean(),
        fc.boolean(),
        (command, suffix, first, withValue) => {
          const [program, ...words] = command.split(' ');
          const unknown = `--zq${suffix}${withValue ? '=1' : ''}`;
          const inserted = first ? [program, unknown, ...words] : [program, ...words, unknown];
          return score(inserted.join(' ')) >= 1;
        },
      ),
      { numRuns: 200 },
    );
  });
});

/** [wrapper options in the written forms that take a value]. */
const WRAPPER_FORMS: Array<[string, string[]]> = [
  ['env', ['-u X', '-uX', '--unset=X', '--unset X', '--un X', '-C sub', '--chdir=sub', '-i', '-0']],
  [
    'xargs',
    [
      '-n 1',
      '-n1',
      '--max-args=1',
      '--max-args 1',
      '-P 2',
      '--process-slot-var V',
      '-I %',
      '-L 1',
      '-E END',
      '-d ,',
      '-s 99',
      '-a list',
      '-0',
      '-r',
    ],
  ],
  [
    'timeout',
    ['-s KILL', '-sKILL', '--signal=KILL', '--signal KILL', '-k 1', '--kill-after=1', '--preserve-status'],
  ],
  ['nice', ['-n 5', '-n5', '--adjustment=5', '--adjustment 5']],
  ['stdbuf', ['-o L', '-oL', '--output=L', '--output L', '-e 0', '-i 0']],
  ['ionice', ['-c 3', '-c3', '--class=3', '-n 7', '--classdata 7']],
];

describe('property: wrappers consume their options’ values', () => {
  for (const [wrapper, forms] of WRAPPER_FORMS) {
    it(wrapper, () => {
      fc.assert(
        fc.property(fc.subarray(forms, { minLength: 1 }), (chosen) => {
          const prefix = `${wrapper} ${chosen.join(' ')}${wrapper === 'timeout' ? ' 5' : ''}`;
          // The program that runs is the one judged: sh -c asks at 3, ls runs freely.
          return score(`${prefix} sh -c id`) === 3 && score(`${prefix} ls`) === 0;
        }),
        { numRuns: 40 },
      );
    });
  }
});
