// Taint-aware egress. Once text an outsider wrote has entered a session (a fetched page, an
// untrusted tool's result), that text may steer the model into carrying data out in a URL. So from
// then on a call that reaches a host nobody trusted named asks the owner first: the hosts the
// owner named in their own messages, and the hosts of calls the owner approved, are trusted; any
// other host asks, with "this host for the session" as the grant. Pure functions, table-tested.

export interface EgressContext {
  /** Untrusted content has entered the session. */
  tainted: boolean;
  /** Hosts the owner named, or that calls the owner approved reached. Lower case, no trailing dot. */
  knownHosts: ReadonlySet<string>;
}

export const UNTAINTED: EgressContext = { tainted: false, knownHosts: new Set() };

/** A host as compared here: lower case, no trailing dot, no `www.` in front. */
export function normalHost(host: string): string {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/\.+$/, '')
    .replace(/^\[|\]$/g, '');
  return bare.startsWith('www.') ? bare.slice(4) : bare;
}

const URL_LIKE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>()]+/gi;
// A bare name with a dot and a letters-only last label: example.org, api.example.co.uk.
const BARE_HOST = /(?<![\w./:-])((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})(?![\w-])/gi;

/** The hosts of every URL (any scheme with an authority) in a text. */
export function urlHosts(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(URL_LIKE)) {
    const url = URL.parse(match[0]);
    if (url?.hostname) found.add(normalHost(url.hostname));
  }
  return [...found];
}

/** Every host a text names: in URLs and as bare domain names. */
export function hostsIn(text: string): string[] {
  const found = new Set<string>(urlHosts(text));
  for (const match of text.replaceAll(URL_LIKE, ' ').matchAll(BARE_HOST)) {
    found.add(normalHost(match[1] as string));
  }
  return [...found];
}

/** Programs whose bare arguments may be hosts (`curl evil.example`, `ssh box.lan`, `git clone h:r`). */
const NETWORK_PROGRAMS =
  /(^|[\s;&|(`/])(curl|wget|nc|ncat|netcat|socat|ssh|scp|sftp|rsync|git|ping|dig|nslookup|host|telnet|ftp|http|https|aria2c|lynx|w3m|openssl|gh|npm|pip|pip3)(?=$|[\s;&|)`])/;

/**
 * The hosts a shell command may reach: every URL's host, and, when it runs a network program,
 * every word shaped like a host name (`user@host:path` included). Names of files (`notes.txt`)
 * count only beside a network program, where a false alarm costs one question.
 */
export function commandHosts(command: string): string[] {
  const found = new Set<string>(urlHosts(command));
  if (NETWORK_PROGRAMS.test(command)) {
    const rest = command.replaceAll(URL_LIKE, ' ').replace(/[\w.+-]+@/g, ' ');
    for (const match of rest.matchAll(BARE_HOST)) found.add(normalHost(match[1] as string));
  }
  return [...found];
}

/** The host a `web_fetch` call reaches, or undefined when its URL does not parse. */
export function fetchHost(args: Record<string, unknown>): string | undefined {
  const url = typeof args.url === 'string' ? URL.parse(args.url.trim()) : null;
  return url?.hostname ? normalHost(url.hostname) : undefined;
}

/** The hosts of `hosts` that nobody trusted named, when the session is tainted; else none. */
export function unknownHosts(context: EgressContext, hosts: readonly string[]): string[] {
  if (!context.tainted) return [];
  return [...new Set(hosts.map(normalHost))].filter((h) => h !== '' && !context.knownHosts.has(h));
}
