// When a word with `://` is a URL. Only a real scheme followed by a real authority is one:
// `x://../../etc/passwd` is a path with odd folder names, and `file://` always names a local file.

export type UrlShape =
  /** http(s)/ws(s) to a host: the network guard's business, not a path. */
  | { kind: 'web' }
  /** Another host's path (ssh://, s3://…): judged for `..` and secret names only. */
  | { kind: 'remote'; path: string }
  /** A local file: its path is judged like any other. */
  | { kind: 'file'; path: string };

const WEB = new Set(['http', 'https', 'ws', 'wss']);
const REMOTE = new Set([
  'ftp',
  'ftps',
  'sftp',
  'ssh',
  'scp',
  'git',
  'git+ssh',
  'git+https',
  'git+http',
  'svn',
  'svn+ssh',
  'hg',
  'rsync',
  's3',
  'gs',
  'az',
  'smb',
  'nfs',
  'ldap',
  'ldaps',
  'redis',
  'rediss',
  'postgres',
  'postgresql',
  'mysql',
  'mongodb',
  'mongodb+srv',
  'amqp',
  'amqps',
  'mqtt',
  'nats',
  'docker',
  'oci',
]);
const SHAPE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/s;
/** user:password@host:port, or [v6]:port; a host has a letter or digit and is not dots alone. */
const AUTHORITY =
  /^(?:[^@/\s]*@)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._~%-]*[A-Za-z0-9])?)(?::\d*)?$/;

/** The common case in one test: http(s) or ws(s) to a real host. */
const WEB_URL = new RegExp(`^(?:https?|wss?)://${AUTHORITY.source.slice(1, -1)}(?:[/?#]|$)`, 'i');

const decode = (text: string) => {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/** The URL a word is, or undefined if it is not one (then it is judged as a path). */
export function urlOf(word: string): UrlShape | undefined {
  if (WEB_URL.test(word)) return { kind: 'web' };
  const m = SHAPE.exec(word);
  if (!m) return undefined;
  const scheme = (m[1] as string).toLowerCase();
  const authority = m[2] as string;
  const web = WEB.has(scheme);
  if (!web && scheme !== 'file' && !REMOTE.has(scheme)) return undefined;
  if (scheme !== 'file' && !AUTHORITY.test(authority)) return undefined;
  if (web) return { kind: 'web' };
  const rest = decode((m[3] as string).replace(/[?#].*$/s, ''));
  if (scheme !== 'file') return { kind: 'remote', path: rest };
  const local = authority === '' || authority.toLowerCase() === 'localhost';
  return { kind: 'file', path: local ? rest || '/' : `/${decode(authority)}${rest}` };
}
