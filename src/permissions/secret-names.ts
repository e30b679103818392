// Names of files and folders that hold secrets. Compared case-insensitively: the workspace may sit on
// a case-insensitive filesystem, where `.ENV` opens `.env`.

/** Env-file templates hold placeholders, not values: reading them is allowed. */
const ENV_TEMPLATE = /^\.env\.(?:example|sample|template|tmpl|tpl|dist|defaults)$/;
const ENV_FILE = /^\.env|^\.flaskenv$|\.env$/;
const KEY_FILE = /^id_(?:rsa|dsa|ecdsa|ed25519|xmss)(?:_sk)?(?!.*\.pub$)/;
const KEY_EXTENSION = /\.(?:pem|key|p12|pfx|jks|keystore|ppk|kdbx|kdb|ovpn|gpg|asc|age)$/;
/** `credentials.json`, `secrets.yaml`, `token`, `.secrets`, but not code that merely has the name. */
const SECRET_STEM = /^[._]?(?:credentials?|secrets?|tokens?|access[-_]?tokens?|auth[-_]?tokens?)(?:$|[._-])/;
const CODE_EXTENSION =
  /\.(?:ts|tsx|js|jsx|mjs|cjs|py|go|rs|rb|java|kt|c|h|cc|cpp|cs|swift|md|mdx|rst|html|css|scss|test\.[a-z]+|spec\.[a-z]+)$/;
const CREDENTIAL_JSON = /^(?:client[-_]?secrets?.*|.*service[-_]?account.*|.*-sa-key)\.json$/;

const CREDENTIAL_DIRS = new Set([
  '.ssh',
  '.aws',
  '.gnupg',
  '.kube',
  '.docker',
  '.azure',
  '.gcloud',
  '.password-store',
  '.terraform.d',
  '.vault',
  '.1password',
]);
const CREDENTIAL_FILES = new Set([
  '.netrc',
  '_netrc',
  '.pgpass',
  '.git-credentials',
  '.npmrc',
  '.yarnrc',
  '.pypirc',
  '.vault-token',
  '.terraformrc',
  '.my.cnf',
  '.htpasswd',
  '.boto',
  '.s3cfg',
  '.dockercfg',
  '.passwd-s3fs',
  'authorized_keys',
  'known_hosts',
  'wallet.dat',
]);
/** Folders under `.config` that hold tokens. */
const CONFIG_CREDENTIALS = new Set(['gcloud', 'gh', 'hub', 'op', 'doctl', 'heroku', 'rclone', 'netlify']);

/** What every rule below needs somewhere in the name: most names are answered by this one test. */
const MAYBE_SECRET =
  /env|^id_|^[._]|kube|authorized_keys|known_hosts|wallet\.dat|\.json$|^(?:credential|secret|token|access|auth)|\.(?:pem|key|p12|pfx|jks|keystore|ppk|kdbx|kdb|ovpn|gpg|asc|age)$/i;

/** Why a file or folder name is secret, or undefined. */
export function secretName(name: string): string | undefined {
  if (!MAYBE_SECRET.test(name)) return undefined;
  const lower = name.toLowerCase();
  if (lower.includes('env')) {
    if (ENV_TEMPLATE.test(lower)) return undefined;
    if (ENV_FILE.test(lower)) return `${name} is an env file`;
  }
  if (KEY_FILE.test(lower)) return `${name} is an SSH private key`;
  if (KEY_EXTENSION.test(lower)) return `${name} is key material`;
  if (CREDENTIAL_DIRS.has(lower)) return `${name} is a credential folder`;
  if (lower.includes('kubeconfig')) return `${name} is a Kubernetes credentials file`;
  if (CREDENTIAL_FILES.has(lower) || CREDENTIAL_JSON.test(lower)) return `${name} is a credentials file`;
  if (SECRET_STEM.test(lower) && !CODE_EXTENSION.test(lower)) return `${name} is a credentials file`;
  return undefined;
}

/** `.config/gcloud`, `.docker/config.json`: secret by where they are, not by their own name. */
export function secretPlace(parent: string, name: string): string | undefined {
  if (parent.length !== 7 || parent.toLowerCase() !== '.config') return undefined;
  if (CONFIG_CREDENTIALS.has(name.toLowerCase())) return `.config/${name} holds credentials`;
  return undefined;
}

/** A bare word that names key material even without a slash or dot (`id_rsa`, `ID_RSA`, `kubeconfig`). */
export const isKeyFileName = (word: string): boolean => KEY_WORD.test(word);
const KEY_WORD =
  /^id_(?:rsa|dsa|ecdsa|ed25519|xmss)(?!.*\.pub$)|kubeconfig|^_netrc$|^authorized_keys$|^known_hosts$|^wallet\.dat$/i;

/** Inside an option word (`-iid_rsa`, `-Fkubeconfig`): the same names anywhere after the dash. */
export const hasKeyFileName = (word: string): boolean => KEY_INSIDE.test(word);
const KEY_INSIDE = /id_(?:rsa|dsa|ecdsa|ed25519|xmss)|kubeconfig|_netrc|known_hosts|authorized_keys/i;

/** Names a glob is tested against: a glob that could match one of them is refused. */
export const SECRET_SAMPLES: readonly string[] = [
  '.env',
  '.env.local',
  '.env.production',
  '.envrc',
  '.flaskenv',
  'prod.env',
  '.ssh',
  '.aws',
  '.gnupg',
  '.kube',
  '.docker',
  '.azure',
  '.netrc',
  '.pgpass',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.vault-token',
  '.password-store',
  'id_rsa',
  'id_dsa',
  'id_ecdsa',
  'id_ed25519',
  'server.pem',
  'server.key',
  'cert.p12',
  'cert.pfx',
  'vault.kdbx',
  'kubeconfig',
  'credentials',
  'credentials.json',
  'secrets.yaml',
  'token',
  'token.json',
  'client_secret.json',
  'authorized_keys',
  'known_hosts',
];
