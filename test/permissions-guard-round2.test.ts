// Security round 2: the policy guard judges what the shell will open, in a real workspace with
// planted files — globs expanded on disk and judged by what they could match, symlinks followed,
// attached option values, URL shapes, case variants of secret names, program folders, and the
// constructs bash and dash read differently.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these are shell commands, not templates
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeShell } from '../src/permissions/judge-shell.ts';
import { guardToolArgs, guardWritePath } from '../src/permissions/policy-guard.ts';

let root: string;
let ws: string;

/** The planted workspace: secrets, their templates, case variants, links in and out. */
function plant(dir: string) {
  const file = (path: string, text = 'x\n') => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  const link = (path: string, to: string) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    symlinkSync(to, join(dir, path));
  };
  file('.env', 'TOKEN=1\n');
  file('.env.example', 'TOKEN=\n');
  file('.ENV.local');
  file('sub/.Env');
  file('keys/ID_RSA');
  file('keys/id_ed25519.pub');
  file('deploy/kubeconfig');
  file('notes.txt');
  file('token');
  file('README.md');
  file('package.json', '{}');
  file('src/a.ts');
  file('src/b.ts');
  file('.gitignore');
  file('.github/workflows/ci.yml');
  file('docs/guide.md');
  mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
  mkdirSync(join(dir, 'build'), { recursive: true });
  link('.env.sample', '.env');
  link('config.example', '.env');
  link('etc-link', '/etc');
  link('passwd-link', '/etc/passwd');
  link('notes', '/etc/hostname');
  link('dangling', '/etc/steward-never-there');
  link('docs/up', '..');
  link('home-link', tmpdir());
  link('inner-link', 'docs/guide.md');
}

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'steward-guard2-')));
  ws = join(root, 'ws');
  mkdirSync(ws);
  plant(ws);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const judge = (command: string) => judgeShell(command, ws);

/** [command, words the refusal contains]: refused by the policy guard, never run. */
const REFUSED: Array<[string, string]> = [
  // globs that could match `.` or `..` (dash matches them), whatever exists now
  ['cat .?/.?/.?/.?/etc/passwd', 'could match ..'],
  ['grep -r x .?/.?/proc/[0-9]*/environ', 'could match ..'],
  ['cat .?/x', 'could match ..'],
  // Under bash's globskipdots a last-word `.*` cannot reach `..`; it is refused for what it matches.
  ['ls .*', ''],
  ['cat .*/x', 'could match ..'],
  ['cat .[.]/etc/passwd', 'could match ..'],
  ['cat .[!a]/x', 'could match ..'],
  ['cat .[^a]/x', 'could match ..'],
  ['cat .[[:punct:]]/x', 'could match ..'],
  ['cat .[,-.]/x', 'could match ..'],
  ['cat .*./x', 'could match ..'],
  ['cat .?*/x', 'could match ..'],
  ['cat src/.?/.?/x', 'could match ..'],
  // Under bash's globskipdots a last-word `.*` cannot reach `..`; it is refused for what it matches.
  ['du -sh .*', ''],
  // Under bash's globskipdots a last-word `.*` cannot reach `..`; it is refused for what it matches.
  ['grep -r TOKEN .*', ''],
  // Under bash's globskipdots a last-word `.*` cannot reach `..`; it is refused for what it matches.
  ['x=.?; cat $x/$x/etc/passwd', ''],
  ['cat .{?,x}/etc/passwd', 'could match ..'],
  ['cat "$PWD"/.?/x', 'could match ..'],
  ['cat < .?/.?/etc/hostname', 'could match ..'],
  // dot-file secret patterns, judged by what they could match
  ['cat .e*', 'could match .env'],
  ['cat .E*', 'could match .env'],
  ['cat .[e]nv', 'could match .env'],
  ['cat .[E]NV', 'could match .env'],
  ['cat .[[:alpha:]]nv', 'could match .env'],
  ['cat .[[:lower:]]nv', 'could match .env'],
  ['cat .[a-z]nv', 'could match .env'],
  ['cat .?nv', 'could match .env'],
  ['cat .en[v]', 'could match .env'],
  ['cat .en[!x]', 'could match .env'],
  ['cat sub/.e*', 'could match .env'],
  ['cat .n?trc', 'could match .netrc'],
  ['cat .git-cred*', 'could match .git-credentials'],
  ['ls .ss?', 'could match .ssh'],
  ['cat .aw[s]/x', 'could match .aws'],
  ['cat *.pem', 'could match'],
  ['cat *.PEM', 'could match'],
  ['cat certs/*.key', 'could match'],
  ['cat *.p12', 'could match'],
  ['cat *.kdbx', 'could match'],
  ['cat id_*', 'could match id_rsa'],
  ['cat keys/ID_*', 'could match id_rsa'],
  ['cat keys/i[d]_rsa', 'could match id_rsa'],
  ['cat keys/id_[[:alpha:]]sa', 'could match id_rsa'],
  ['cat kube*', 'could match kubeconfig'],
  ['cat deploy/kube?onfig', 'could match kubeconfig'],
  ['cat credential?', 'could match credentials'],
  ['cat secrets.y*', 'could match secrets.yaml'],
  // what globs match now is judged too
  ['du -sh .[!.]*', 'env file'],
  ['cat .??*', 'env file'],
  ['cat sub/.[!.]*', '.Env'],
  ['cat keys/*', 'ID_RSA'],
  ['cat deploy/*', 'kubeconfig'],
  ['cat */kubeconfig', 'kubeconfig'],
  ['cat e*/passwd', 'link'],
  ['cat passwd-l*', 'link'],
  ['wc -l *', 'link'],
  ['cd sub && cat .[!.]*', 'env file'],
  ['ls *', 'is a link'],
  ['ls [a-z]*', 'is a link'],
  ['cat co*', 'is a link'],
  ['cat token', 'credentials file'],
  // case variants and the wider list of secret names
  ['cat .ENV', 'env file'],
  ['cat .Env', 'env file'],
  ['cat .ENV.local', 'env file'],
  ['cat sub/.Env', 'env file'],
  ['cat prod.env', 'env file'],
  ['cat .envrc', 'env file'],
  ['cat .env.production', 'env file'],
  ['cat .env.example.local', 'env file'],
  ['cat ID_RSA', 'SSH private key'],
  ['cat keys/ID_RSA', 'SSH private key'],
  ['cat Id_Ed25519', 'SSH private key'],
  ['cat SERVER.PEM', 'key material'],
  ['cat vault.kdbx', 'key material'],
  ['cat cert.PFX', 'key material'],
  ['cat kubeconfig', 'Kubernetes'],
  ['cat deploy/kubeconfig', 'Kubernetes'],
  ['cat KUBECONFIG', 'Kubernetes'],
  ['cat kubeconfig.yaml', 'Kubernetes'],
  ['ls .kube', 'credential folder'],
  ['ls .KUBE', 'credential folder'],
  ['cat .docker/config.json', 'credential folder'],
  ['cat .NETRC', 'credentials file'],
  ['cat .npmrc', 'credentials file'],
  ['cat .pypirc', 'credentials file'],
  ['cat .Git-Credentials', 'credentials file'],
  ['ls .aws', 'credential folder'],
  ['ls .SSH', 'credential folder'],
  ['ls .gnupg', 'credential folder'],
  ['cat .config/gcloud/credentials.db', 'credentials'],
  ['ls .config/gh', 'holds credentials'],
  ['cat credentials.json', 'credentials file'],
  ['cat Credentials.JSON', 'credentials file'],
  ['cat secrets.yaml', 'credentials file'],
  ['cat config/secrets.yml', 'credentials file'],
  ['cat token.json', 'credentials file'],
  ['cat .secrets', 'credentials file'],
  ['cat client_secret_123.json', 'credentials file'],
  ['cat my-service-account.json', 'credentials file'],
  ['cat .vault-token', 'credentials file'],
  // attached option values
  ['jq -nrf .env', 'env file'],
  ['grep -rf .env .', 'env file'],
  ['grep -f.env x', 'env file'],
  ['grep -rf.env x', 'env file'],
  ['rg -f .env x', 'env file'],
  ['awk -f.env x', 'env file'],
  ['sed -f .env x', 'env file'],
  ['tool --file=.env', 'env file'],
  ['tool --config=keys/ID_RSA', 'SSH private key'],
  ['gcc -o/etc/x a.c', 'system directory /etc'],
  ['gcc -I../x a.c', 'climbs out'],
  ['gcc -L/tmp/x a.c', 'outside the workspace'],
  ['tar -C/ -xf a.tar', 'outside the workspace'],
  ['curl -K.env https://example.com', 'env file'],
  ['ssh -i~/.ssh/id_rsa host', '.ssh'],
  ['ssh -Fkeys/ID_RSA host', 'SSH private key'],
  ['ssh -iid_rsa host', 'SSH private key'],
  ['ssh -iID_ED25519 host', 'SSH private key'],
  ['kubectl --kubeconfig=kubeconfig get pods', 'Kubernetes'],
  ['cc -Wl,-rpath,/etc/x a.c', 'system directory /etc'],
  ['tool -xvf/proc/self/environ', 'environment'],
  ['grep -e x --file .env y', 'env file'],
  // words shaped like URLs are paths unless a real scheme and host
  ['cat x://../../../etc/passwd', 'climbs out'],
  ['cat foo://x/../../etc/passwd', 'climbs out'],
  ['cat http://../../etc/passwd', 'climbs out'],
  ['cat https:///../x', 'climbs out'],
  ['cat file:///etc/passwd', 'system directory /etc'],
  ['curl file://localhost/etc/passwd', 'system directory /etc'],
  ['curl file://etc/passwd', 'system directory /etc'],
  ['curl file://../x', 'climbs out'],
  ['curl FILE:///proc/self/environ', 'environment'],
  ['curl file:///%65tc/passwd', 'system directory /etc'],
  [`curl file://${'/'}tmp/x`, 'outside the workspace'],
  ['scp x scp://host/../../etc/x', 'climbs'],
  ['rsync -a rsync://host/m/.env .', 'env file'],
  // /proc, /sys, /dev in any spelling
  ['cat //proc/self/environ', 'environment'],
  ['cat /./proc/1/environ', 'environment'],
  ['cat /proc/self/../1/environ', 'climbs out'],
  ['cat /pro?/self/environ', 'outside the workspace'],
  ['cat /proc/[0-9]*/environ', 'environment'],
  ['cat /proc/self/cmdline', 'system directory /proc'],
  ['cat /sys/kernel/x', 'system directory /sys'],
  ['cat /dev/sda', 'system directory /dev'],
  ['cat /dev/tcp/host/80', 'system directory /dev'],
  ['cat ///proc//self//environ', 'environment'],
  // writes into program folders are refused, not asked
  ['cp x /usr/local/bin/git', 'program folder'],
  ['cp x /usr/bin/git', 'program folder'],
  ['cp x /bin/ls', 'program folder'],
  ['cp x /sbin/init', 'program folder'],
  ['cp x /usr/local/sbin/x', 'program folder'],
  ['cp x /opt/tool/bin/tool', 'program folder'],
  ['echo x > /usr/bin/git', 'program folder'],
  ['tee /usr/local/bin/node < x', 'program folder'],
  ['install -m755 x /usr/local/bin/', 'program folder'],
  ['ln -sf x /usr/bin/python3', 'program folder'],
  ['cp x ~/.local/bin/git', 'home folder'],
  ['cp x $HOME/.local/bin/git', '$HOME'],
  ['cp x node_modules/.bin/tsc', 'program folder'],
  ['echo x > node_modules/.bin/vitest', 'program folder'],
  ['cp x .venv/bin/python', 'program folder'],
  ['cp x .husky/pre-commit', 'configuration'],
  ['mv x .GIT/hooks/pre-commit', 'git metadata'],
  // symlinks are followed to where they lead
  ['cat .env.sample', 'is a link'],
  ['cat config.example', 'is a link'],
  ['cat passwd-link', 'is a link'],
  ['cat etc-link/passwd', 'is a link'],
  ['cat notes', 'is a link'],
  ['echo x > dangling', 'is a link'],
  ['cat docs/up/.env', 'env file'],
  ['cat docs/up/passwd-link', 'is a link'],
  ['ls home-link', 'is a link'],
  ['cd etc-link && cat passwd', 'is a link'],
  ['echo x > etc-link/new', 'is a link'],
  ['cp notes.txt etc-link/', 'is a link'],
  // recursive readers read what is under their folders
  ['grep -r TOKEN .', 'would read'],
  ['grep -R TOKEN', 'would read'],
  ['grep -rn TOKEN', 'would read'],
  ['egrep -ri token .', 'would read'],
  ['grep --recursive x .', 'would read'],
  ['grep -d recurse x .', 'would read'],
  ['grep -r x sub', '.Env'],
  ['grep -rl x ./keys', 'ID_RSA'],
  ['rgrep x .', 'would read'],
  ['timeout 5 grep -r x .', 'would read'],
  ['rg TOKEN', 'would read'],
  ['rg x deploy', 'kubeconfig'],
  ['rg --hidden TOKEN sub', '.Env'],
  ['rg -uu x sub', '.Env'],
  ['ag x keys', 'ID_RSA'],
  ['diff -r sub docs', '.Env'],
  ['grep -r x s*', '.Env'],
  ['grep -R x docs', 'would read'],
  ['find . | xargs cat', 'would read'],
  ['find . -type f -print0 | xargs -0 head -n 50', 'would read'],
  ['ls -a | xargs cat', 'would read'],
  ['ls -A sub | xargs -I{} cat sub/{}', '.Env'],
  ['fd -H | xargs cat', 'would read'],
  ['rg --files --hidden | xargs grep x', 'would read'],
  ['find . -type f -exec cat {} +', 'would read'],
  ['find sub -exec head {} \\;', '.Env'],
  ['tar -cf - .', 'would read'],
  ['tar czf out.tgz .', 'would read'],
  ['tar -czf out.tgz sub', '.Env'],
  ['zip -r - .', 'would read'],
  ['zip -qr out.zip keys', 'ID_RSA'],
  ['zip -r out.zip docs', 'would read'],
  // text arguments that the shell expands into names first
  ['echo /home/*/.ssh/*', 'credential folder'],
  ['echo /home/*', 'home folder'],
  ['echo .?/.?/etc/*', 'could match ..'],
  ['printf "%s\\n" /etc/*', 'system directory /etc'],
  ['grep x .?/.?/etc/passwd', 'could match ..'],
  // an unknown value may be empty
  ['cat .e$@nv', 'env file'],
  ['cat .e${x}nv', 'env file'],
  ['cat .e$(true)nv', 'env file'],
  ['cat ".e$1nv"', 'env file'],
  ['cat keys/ID_$x"RSA"', 'SSH private key'],
];

describe('round 2: the guard refuses', () => {
  it.each(REFUSED)('%j', (command, words) => {
    const v = judge(command);
    expect(v.verdict, v.rationale).toBe('deny');
    expect(v.layer).toBe('policy');
    expect(v.rationale).toContain(words);
  });
});

/** Constructs whose meaning differs between shells, or that change expansion: always ask. */
const DIALECT: string[] = [
  "echo $'X\\' ; rm -rf build ; echo \\''",
  "echo $'a\\'b'",
  "printf %s $'\\'' ; ls",
  'echo x &>/dev/null rm -rf build',
  'echo x &>> log.txt rm -rf build',
  'ls &> out.txt -la',
  'echo $"hello"',
  'echo $[1+2]',
  'cat @(a|b)',
  'ls !(x)',
  'ls +(a)',
  'ls *(a)',
  'ls ?(a)',
  'cat <(ls)',
  'diff <(ls a) <(ls b)',
  'tee >(wc -l) < notes.txt',
  'shopt -s dotglob; cat *',
  'shopt -s nocaseglob; cat .E*',
  'shopt -u globskipdots; cat .?/x',
  "x='a[$(rm -rf build)]'; echo $((x))",
  "x='a[`rm -rf build`]'",
  "x=$'a[$(rm -rf build)]'",
  'read x < notes.txt; echo ${s:x}',
  'echo "${s:n:1}"',
  'echo ${arr[i]}',
];

describe('round 2: dialect hazards always ask', () => {
  it.each(DIALECT)('%j', (command) => {
    const v = judge(command);
    expect(v.verdict, v.rationale).not.toBe('allow');
    expect(v.score).toBe(3);
  });
});

/** Harmless: must stay allowed (run without asking). */
const ALLOWED: string[] = [
  'cat .env.example',
  'cat .ENV.EXAMPLE',
  'cat .env.template',
  'cat .env.dist',
  'cat notes.txt',
  'cat README.md',
  'cat *.json',
  'cat *.md',
  'ls src/*',
  'ls src/*.ts',
  'wc -l src/*',
  'ls -la',
  'ls -a',
  'ls .github',
  'cat .gitignore',
  'cat keys/id_ed25519.pub',
  'ls keys',
  'ls docs',
  'cat docs/guide.md',
  'cat inner-link',
  'ls ./src',
  'ls src/',
  'grep -rn TODO src',
  'rg TOKEN src',
  'rg x sub',
  'grep -r x docs',
  'diff -r src docs',
  'grep TOKEN notes.txt',
  'find src -type f | xargs cat',
  'find . -type f | xargs wc -l',
  'find . -name "*.ts"',
  'grep -r credentials docs/',
  "grep -e '.env' -r src",
  'grep -l x src/*.ts',
  'cut -d/ -f2 notes.txt',
  "awk -F/ '{print $1}' notes.txt",
  'sort -t, -k2 notes.txt',
  'head -n5 notes.txt',
  'tail -n+2 notes.txt',
  'git log -n20 --oneline',
  'git diff --stat',
  'git show HEAD:README.md',
  'echo $((1+2))',
  'echo $((2*(3+4)))',
  'echo ${x:-default}',
  'echo "${arr[@]}"',
  'ls &>/dev/null',
  'ls 2>&1 | head',
  'echo {a,b}.txt',
  'cat file.{md,txt}',
  'cat /dev/null',
  'find . -name "*.ts"',
  'du -sh src docs',
  'jq . package.json',
  'jq -r .name package.json',
  'cat src/?.ts',
  'ls s[a-z]*/',
  'cat [Rr]EADME.md',
];

/** Not refused by the guard (they ask for their own reasons: the network, an unseen value). */
const NOT_REFUSED: string[] = [
  // bash's globskipdots: a last-word `.*` over a folder that holds no secret only lists it.
  'ls docs/.*',
  'curl -s https://api.example.com/v1/status',
  'curl -s https://example.com/.env',
  'curl -s http://localhost:8080/x',
  'git clone ssh://git@github.com/org/repo.git',
  'git clone git+ssh://git@host:22/org/repo',
  'cat $PWD/notes.txt',
  'cp notes.txt build/',
  'echo x > build/out.txt',
  'git checkout credentials',
  'tar -czf out.tgz src',
  'zip -r out.zip src',
  'tar -tf x.tar',
  'cat src/$x.ts',
  'mv docs/guide.md docs/old.md',
];

describe('round 2: the guard does not refuse', () => {
  it.each(NOT_REFUSED)('%j', (command) => {
    const v = judge(command);
    expect(v.verdict, v.rationale).not.toBe('deny');
  });
});

describe('round 2: harmless commands stay allowed', () => {
  it.each(ALLOWED)('%j', (command) => {
    const v = judge(command);
    expect(v.verdict, v.rationale).toBe('allow');
  });
});

/** Listing dot-globs in bash 5.2 (globskipdots): judged by what they match now. */
describe('round 2: dot-globs under a guaranteed bash', () => {
  it('a clean folder lists its dot-files without asking, a folder with a secret is refused', async () => {
    const { guardCommand } = await import('../src/permissions/policy-guard.ts');
    const { parseCommand } = await import('../src/permissions/shell-parse.ts');
    const clean = join(root, 'clean');
    mkdirSync(join(clean, '.github'), { recursive: true });
    writeFileSync(join(clean, '.gitignore'), '');
    const guard = (command: string, dir: string, dialect?: 'bash') =>
      guardCommand(parseCommand(command), dir, [], dialect ? { dialect } : {});
    expect(guard('ls .*', clean, 'bash')).toBeUndefined();
    expect(guard('du -sh .*', clean, 'bash')).toBeUndefined();
    expect(guard('ls .*', clean)).toContain('could match ..');
    expect(guard('du -sh .[!.]*', clean)).toBeUndefined();
    expect(guard('ls .*', ws, 'bash')).toContain('env file');
    // Never for a folder pattern: that is how a path climbs.
    expect(guard('cat .?/x', clean, 'bash')).toContain('could match ..');
    expect(guard('cat .*/x', clean, 'bash')).toContain('could match ..');
    // A targeted pattern is refused even where nothing matches yet.
    expect(guard('cat .e*', clean, 'bash')).toContain('could match .env');
    // Without the disk, a listing dot-pattern cannot be judged by what it matches: refused.
    expect(guardCommand(parseCommand('du -sh .[!.]*'), clean, [], { disk: false })).toContain('.env');
  });
});

describe('round 2: write_file and other tools follow links', () => {
  it.each([
    ['.env.sample', 'is a link'],
    ['passwd-link', 'is a link'],
    ['etc-link/x', 'is a link'],
    ['dangling', 'is a link'],
    ['node_modules/.bin/tsc', 'program folder'],
    ['.ENV', 'env file'],
    ['deploy/kubeconfig', 'Kubernetes'],
  ])('write_file refuses %j', (path, words) => {
    expect(guardWritePath(path, ws)).toContain(words);
  });

  it.each(['notes.txt', 'docs/new.md', 'inner-link', 'build/out.txt', '.env.example'])(
    'write_file allows %j',
    (path) => {
      expect(guardWritePath(path, ws)).toBeUndefined();
    },
  );

  it('other tools judge path arguments through links', () => {
    expect(guardToolArgs({ path: 'passwd-link' }, ws)).toContain('is a link');
    expect(guardToolArgs({ path: 'notes.txt' }, ws)).toBeUndefined();
  });
});

describe('round 2: the pure pieces', () => {
  it('dialectHazards names what bash and dash read differently, and nothing else', async () => {
    const { dialectHazards } = await import('../src/permissions/dialect.ts');
    for (const command of DIALECT) expect(dialectHazards(command).length, command).toBeGreaterThan(0);
    for (const command of [
      'ls -la',
      "echo $'plain\\n'",
      'echo "$(date)" && ls',
      'ls &>/dev/null',
      'ls 2>&1 | head',
      'echo ${x:-a} ${#x} ${x:0:2}',
      'echo $((1+2*(3)))',
      "grep -E 'a(b|c)' f",
      "awk '{print $1}' f",
      'echo "[a]" [b]',
    ]) {
      expect(dialectHazards(command), command).toEqual([]);
    }
  });

  it('urlOf tells real URLs from words shaped like them', async () => {
    const { urlOf } = await import('../src/permissions/url-shape.ts');
    expect(urlOf('https://example.com/x')).toEqual({ kind: 'web' });
    expect(urlOf('http://user@host:8080/x?y#z')).toEqual({ kind: 'web' });
    expect(urlOf('ssh://git@github.com/org/repo.git')).toEqual({ kind: 'remote', path: '/org/repo.git' });
    expect(urlOf('file:///etc/passwd')).toEqual({ kind: 'file', path: '/etc/passwd' });
    expect(urlOf('file://localhost/etc/passwd')).toEqual({ kind: 'file', path: '/etc/passwd' });
    expect(urlOf('file://etc/passwd')).toEqual({ kind: 'file', path: '/etc/passwd' });
    for (const word of [
      'x://../../etc',
      'http://../x',
      'https://./x',
      'https:///x',
      'foo://host/x',
      'http://a b/',
    ]) {
      expect(urlOf(word), word).toBeUndefined();
    }
  });

  it('secretName compares without case and lets templates through', async () => {
    const { secretName } = await import('../src/permissions/secret-names.ts');
    for (const name of [
      '.env',
      '.ENV',
      '.Env.Local',
      'prod.env',
      'ID_RSA',
      'x.PEM',
      'KubeConfig',
      '.NPMRC',
      'Secrets.Yaml',
    ]) {
      expect(secretName(name), name).toBeDefined();
    }
    for (const name of [
      '.env.example',
      '.ENV.SAMPLE',
      '.env.template',
      'README.md',
      'tokenizer.json',
      'token_utils.py',
      'secrets.ts',
      'id_rsa.pub',
      'environment.ts',
    ]) {
      expect(secretName(name), name).toBeUndefined();
    }
  });
});
