// curl and wget, with every option modelled: reading a URL to stdout asks at 2 (a grant is keyed on
// the hosts it reaches); writing a file, sending data, reading a config or an option the table does
// not know asks at 3. `hostsOf` is what a network grant needs.
import { type Judgement, judged } from './judgement.ts';
import { flags, type OptionTable, type ParsedArgs, parseArgs, shortNames, shown, values } from './options.ts';

/**
 * scheme://host[:port] followed by a path, query, fragment or the end. Deliberately strict (no
 * user@, no escapes, no globs, no brackets beyond an IPv6 literal): a host a grant is keyed on must
 * be the host curl or wget will reach, so anything a URL parser might read differently is refused.
 */
const URL_HOST =
  /^(?:[a-z][a-z0-9+.-]*:\/\/)?([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])\.?(?::\d{1,5})?(?:[/?#]|$)/i;

/** Hosts of URL-like arguments (`https://h/…`, `h:port`, bare `h/path`); null if any is unreadable. */
export function hostsOf(urls: readonly string[]): string[] | null {
  const hosts = new Set<string>();
  for (const raw of urls) {
    const m = URL_HOST.exec(raw);
    if (!m || /[\s\\]/.test(raw)) return null;
    hosts.add((m[1] as string).toLowerCase());
  }
  return hosts.size > 0 ? [...hosts] : null;
}

const network = (operands: readonly string[]) => ({ network: { hosts: hostsOf(operands) ?? [] } });
/** A network judgement with no parseable host carries `network: null`: no grant may cover it. */
const reach = (operands: readonly string[]) => {
  const hosts = hostsOf(operands);
  return hosts ? { network: { hosts } } : { network: null };
};

const CURL: OptionTable = {
  short: shortNames(`s=silent S=show-error f=fail L=location I=head i=include v=verbose k=insecure 4=ipv4
    6=ipv6 H=header A=user-agent e=referer u=user m=max-time G=get g=globoff w=write-out
    r=range x=proxy C=continue-at #=progress-bar Y=speed-limit y=speed-time z=time-cond
    N=no-buffer q=disable o=output O=remote-name J=remote-header-name D=dump-header
    c=cookie-jar b=cookie K=config d=data F=form T=upload-file X=request E=cert Q=quote
    U=proxy-user Z=parallel j=junk-session-cookies l=list-only n=netrc R=remote-time
    B=use-ascii M=manual V=version h=help 0=http1.0 1=tlsv1 2=sslv2 3=sslv3 a=append
    P=ftp-port t=telnet-option`),
  long: {
    ...flags(`silent show-error fail fail-early fail-with-body location location-trusted head include
      verbose insecure ipv4 ipv6 get globoff progress-bar no-progress-meter no-buffer disable
      compressed compressed-ssh http1.0 http1.1 http2 http2-prior-knowledge http3 http3-only tlsv1
      tlsv1.0 tlsv1.1 tlsv1.2 tlsv1.3 sslv2 sslv3 tcp-nodelay tcp-fastopen no-keepalive
      path-as-is raw tr-encoding ssl-reqd ssl no-sessionid no-alpn no-npn junk-session-cookies
      list-only netrc netrc-optional remote-time use-ascii manual version help next parallel
      parallel-immediate retry-connrefused retry-all-errors styled-output no-styled-output
      show-headers remote-name remote-name-all remote-header-name append create-dirs
      ca-native proxy-insecure suppress-connect-headers http0.9 no-clobber xattr`),
    ...values(`header user-agent referer user max-time connect-timeout write-out range proxy
      continue-at speed-limit speed-time time-cond retry retry-delay retry-max-time max-redirs
      max-filesize limit-rate resolve connect-to cacert capath dns-servers interface local-port
      noproxy proxy-user url output dump-header cookie-jar cookie config data data-ascii
      data-binary data-raw data-urlencode form form-string json upload-file request cert key
      quote libcurl output-dir trace trace-ascii stderr etag-save etag-compare hsts alt-svc
      unix-socket abstract-unix-socket netrc-file ftp-port telnet-option mail-from mail-rcpt
      mail-auth variable expand-url expand-data expand-header proxy-header parallel-max
      request-target aws-sigv4 oauth2-bearer cert-type key-type pass ciphers ech happy-eyeballs-timeout-ms
      preproxy socks4 socks4a socks5 socks5-hostname keepalive-time url-query`),
  },
};
/** Options that write files, send data, read files or options, or reach what is not HTTP. */
const CURL_DANGER: Record<string, string> = {
  output: 'writes a file',
  'remote-name': 'writes a file',
  'remote-name-all': 'writes a file',
  'remote-header-name': 'writes a file named by the server',
  'dump-header': 'writes a file',
  'cookie-jar': 'writes a file',
  libcurl: 'writes a file',
  'output-dir': 'writes files',
  'create-dirs': 'creates folders',
  trace: 'writes a file',
  'trace-ascii': 'writes a file',
  stderr: 'writes a file',
  'etag-save': 'writes a file',
  hsts: 'writes a cache file',
  'alt-svc': 'writes a cache file',
  xattr: 'writes file attributes',
  config: 'reads options from a file',
  data: 'sends data',
  'data-ascii': 'sends data',
  'data-binary': 'sends data',
  'data-raw': 'sends data',
  'data-urlencode': 'sends data',
  form: 'sends data',
  'form-string': 'sends data',
  json: 'sends data',
  'upload-file': 'sends data',
  quote: 'sends server commands',
  'mail-from': 'sends mail',
  'mail-rcpt': 'sends mail',
  'unix-socket': 'reaches a local socket',
  'abstract-unix-socket': 'reaches a local socket',
  variable: 'reads files or the environment into the request',
  'expand-url': 'reads files or the environment into the request',
  'expand-data': 'reads files or the environment into the request',
  'expand-header': 'reads files or the environment into the request',
  'telnet-option': 'speaks telnet',
  'ftp-port': 'opens a port',
  append: 'uploads',
};

function curlDanger(parsed: ParsedArgs): string | undefined {
  for (const o of parsed.options) {
    const what = Object.hasOwn(CURL_DANGER, o.name) ? CURL_DANGER[o.name] : undefined;
    if (what && !(o.name === 'output' && o.value === '-')) return `curl ${shown(o)} ${what}`;
    if (o.name === 'request' && !/^(?:GET|HEAD|OPTIONS)$/i.test(o.value ?? ''))
      return `curl sends a ${o.value ?? ''} request`;
    // @file reads a local file into what is sent; %output{} writes one.
    if ((o.name === 'header' || o.name === 'proxy-header') && (o.value ?? '').startsWith('@'))
      return `curl ${shown(o)} @file sends a local file`;
    if (o.name === 'write-out' && /%(?:output|\{stderr)|^@/.test(o.value ?? ''))
      return 'curl -w writes or reads a file';
    if (o.name === 'cookie' && !(o.value ?? '').includes('='))
      return 'curl -b sends cookies read from a file';
  }
  return undefined;
}

export function curlRule(args: string[]): Judgement {
  const parsed = parseArgs(args, CURL);
  const unknown = parsed.unknown[0];
  if (unknown !== undefined) return judged(3, `curl ${unknown} is an option the classifier does not model`);
  const urls = [
    ...parsed.operands,
    ...parsed.options.filter((o) => o.name === 'url').map((o) => o.value ?? ''),
  ];
  const danger = curlDanger(parsed);
  if (danger) return judged(3, danger, network(urls));
  const scheme = urls.find((u) => /^[a-z][a-z0-9+.-]*:/i.test(u) && !/^(?:https?|ftps?):\/\//i.test(u));
  if (scheme) return judged(3, `curl reaches ${scheme.split(':')[0]}:, not only the web`, { network: null });
  return judged(2, 'curl reaches the network (web_fetch is the guarded way to read a page)', reach(urls));
}

const WGET: OptionTable = {
  short: shortNames(`q=quiet v=verbose n=n O=output-document o=output-file a=append-output P=directory-prefix
    e=execute i=input-file r=recursive l=level N=timestamping c=continue t=tries T=timeout
    w=wait U=user-agent S=server-response k=convert-links m=mirror p=page-requisites
    x=force-directories H=span-hosts d=debug b=background B=base F=force-html D=domains
    A=accept R=reject I=include-directories X=exclude-directories L=relative
    K=backup-converted E=adjust-extension V=version h=help 4=inet4-only 6=inet6-only`),
  long: {
    ...flags(`quiet verbose no-verbose server-response spider no-check-certificate inet4-only
      inet6-only no-dns-cache no-cache ignore-length no-proxy continue show-progress progress
      no-http-keep-alive no-cookies keep-session-cookies content-on-error https-only version help
      debug no-iri ignore-case no-hsts no-host-directories no-directories no-parent relative
      span-hosts force-html adjust-extension no-netrc auth-no-challenge xattr`),
    ...values(`output-document output-file append-output directory-prefix execute input-file level
      tries timeout wait waitretry user-agent header referer user password http-user
      http-password limit-rate quota bind-address dns-timeout connect-timeout read-timeout
      base domains exclude-domains accept reject include-directories exclude-directories
      ca-certificate ca-directory certificate private-key load-cookies save-cookies post-data
      post-file body-data body-file method use-askpass warc-file rejected-log config
      local-encoding remote-encoding restrict-file-names max-redirect proxy-user
      proxy-password cut-dirs default-page report-speed secure-protocol`),
    n: 'value',
    recursive: 'flag',
    timestamping: 'flag',
    'convert-links': 'flag',
    mirror: 'flag',
    'page-requisites': 'flag',
    'force-directories': 'flag',
    background: 'flag',
    'backup-converted': 'flag',
    'content-disposition': 'flag',
    'no-clobber': 'flag',
    'delete-after': 'flag',
    'trust-server-names': 'flag',
  },
  abbreviate: true,
};
const WGET_DANGER: Record<string, string> = {
  'output-document': 'overwrites a file',
  'output-file': 'writes a log file',
  'append-output': 'writes a log file',
  'directory-prefix': 'writes files into a folder',
  execute: 'runs a wgetrc command',
  config: 'reads options from a file',
  'post-data': 'sends data',
  'post-file': 'sends a file',
  'body-data': 'sends data',
  'body-file': 'sends a file',
  method: 'sends a request that can change things',
  'use-askpass': 'runs a program',
  'save-cookies': 'writes a file',
  'warc-file': 'writes a file',
  'rejected-log': 'writes a file',
  recursive: 'writes many files the server chooses',
  mirror: 'writes many files the server chooses',
  'page-requisites': 'writes many files the server chooses',
  timestamping: 'overwrites existing files',
  'convert-links': 'rewrites downloaded files',
  'content-disposition': 'writes a file named by the server',
  'trust-server-names': 'writes a file named by the server',
  background: 'keeps running in the background and writes wget-log',
  'delete-after': 'deletes files',
  'force-directories': 'creates folders',
};

export function wgetRule(args: string[]): Judgement {
  const parsed = parseArgs(args, WGET);
  const unknown = parsed.unknown[0];
  if (unknown !== undefined) return judged(3, `wget ${unknown} is an option the classifier does not model`);
  const urls = parsed.operands;
  for (const o of parsed.options) {
    const what = Object.hasOwn(WGET_DANGER, o.name) ? WGET_DANGER[o.name] : undefined;
    if (!what || (o.name === 'output-document' && o.value === '-')) continue;
    return judged(3, `wget ${shown(o)} ${what}`, network(urls));
  }
  // -n takes letters (-nv, -nc, -nd, -nH, -np): only the harmless ones.
  const n = parsed.options.find((o) => o.name === 'n' && !/^[vcdHp]+$/.test(o.value ?? ''));
  if (n) return judged(3, `wget ${shown(n)} is an option the classifier does not model`);
  if (urls.some((u) => /^[a-z][a-z0-9+.-]*:/i.test(u) && !/^(?:https?|ftps?):\/\//i.test(u)))
    return judged(3, 'wget reaches a URL that is not web or FTP', { network: null });
  const toStdout = parsed.options.some((o) => o.name === 'output-document' && o.value === '-');
  return judged(
    2,
    toStdout ? 'wget downloads to stdout' : 'wget downloads files from the network',
    reach(urls),
  );
}
