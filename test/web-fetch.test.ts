import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';
import { addressVerdict, guardedFetch, type Resolver, staticResolver } from '../src/netguard/index.ts';
import { createWebFetchTool, webFetchTool } from '../src/tools/builtin/web-fetch.ts';
import { runTool } from '../src/tools/run-tool.ts';
import { type ToolContext, ToolInputError } from '../src/tools/types.ts';

// A real HTTP server on 127.0.0.1, made "public" only through the test predicate below, and an
// "internal" one on 127.0.0.2 (same port) that nothing may ever reach.
let site: Server;
let internal: Server;
let port = 0;
const hits: { path: string; host: string; auth?: string }[] = [];
let internalHits = 0;

const ARTICLE = `<!doctype html><html><head><title>Fjord report</title><style>p{color:red}</style></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav><article><h1>Fjords of the west</h1>
<p>The fjords were carved by glaciers. ${'Steep walls rise from deep water. '.repeat(20)}</p>
<p>See <a href="/more">the longer survey</a> for details.</p><ul><li>Sognefjord</li><li>Hardangerfjord</li></ul>
<script>document.title = 'injected'</script></article><footer>(c) nobody</footer></body></html>`;

function route(req: IncomingMessage, res: ServerResponse): ServerResponse | undefined {
  const path = req.url ?? '/';
  hits.push({
    path,
    host: req.headers.host ?? '',
    ...(req.headers.authorization ? { auth: req.headers.authorization } : {}),
  });
  const redirect = (status: number, location: string) => res.writeHead(status, { location }).end('moved');
  const chain = /^\/chain\/(\d+)$/.exec(path);
  if (chain) {
    const n = Number(chain[1]);
    if (n > 0) return redirect(302, `/chain/${n - 1}`);
    return res.writeHead(200, { 'content-type': 'text/plain' }).end('end of the chain');
  }
  switch (path) {
    case '/article':
      return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE);
    case '/plain':
      return res.writeHead(200, { 'content-type': 'text/plain' }).end('just plain text\nline two');
    case '/json':
      return res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"n":3}');
    case '/gzip':
      return res
        .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
        .end(gzipSync('unzipped text'));
    case '/image':
      return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    case '/unlabelled':
      return res.writeHead(200).end(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00, 0x01]));
    case '/missing':
      return res.writeHead(404, { 'content-type': 'text/html' }).end('<p>No such page here.</p>');
    case '/big':
      return res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(200_000));
    case '/slow':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('the first part arrives, the rest never does');
      return;
    case '/to-private-name':
      return redirect(302, `http://internal.test:${port}/secret`);
    case '/to-private-address':
      return redirect(301, `http://127.0.0.2:${port}/secret`);
    case '/to-metadata':
      return redirect(308, 'http://169.254.169.254/latest/meta-data/');
    case '/to-file':
      return redirect(302, 'file:///etc/passwd');
    case '/to-other-origin':
      return redirect(302, `http://other.test:${port}/plain`);
    case '/307':
      return redirect(307, '/article');
    default:
      return res.writeHead(404).end();
  }
}

const listen = (server: Server, host: string, at: number) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at, host, () => resolve((server.address() as AddressInfo).port));
  });

beforeAll(async () => {
  site = createServer(route);
  port = await listen(site, '127.0.0.1', 0);
  internal = createServer((_req, res) => {
    internalHits++;
    res.end('internal secret');
  });
  await listen(internal, '127.0.0.2', port);
});

afterAll(async () => {
  for (const server of [site, internal]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const notFound: Resolver = async (host) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};
const resolver = staticResolver(
  new Map([
    ['site.test', ['127.0.0.1']],
    ['other.test', ['127.0.0.1']],
    ['internal.test', ['10.0.0.7']],
  ]),
  notFound,
);
const loopbackIsPublic = (address: string) => address === '127.0.0.1' || addressVerdict(address).allowed;
const tool = createWebFetchTool({
  resolver,
  isAllowedAddress: loopbackIsPublic,
  limits: { maxBytes: 50_000 },
});
/** Only the timeout test gets a short total timeout: the others (redirect chains too) keep the default. */
const impatient = createWebFetchTool({
  resolver,
  isAllowedAddress: loopbackIsPublic,
  limits: { maxBytes: 50_000, timeoutMs: 800 },
});

const ctx = (): ToolContext => ({
  signal: new AbortController().signal,
  sessionId: 'test',
  workspace: '/tmp',
  log: createLogger('silent', []),
  now: () => new Date(),
});
async function fetchText(url: string, t = tool): Promise<string> {
  const output = await t.execute({ url }, ctx());
  if (typeof output !== 'string') throw new Error('web_fetch should return plain text');
  return output;
}
const site$ = (path: string) => `http://site.test:${port}${path}`;

async function refusal(url: string): Promise<string> {
  const error = await fetchText(url).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolInputError);
  return (error as Error).message;
}

describe('web_fetch: the tool as the model sees it', () => {
  it('is untrusted, takes exactly {url}, and documents itself', () => {
    expect(webFetchTool.name).toBe('web_fetch');
    expect(webFetchTool.trusted).toBe(false);
    expect(webFetchTool.inputSchema).toMatchObject({ required: ['url'], additionalProperties: false });
    expect(webFetchTool.description).toMatch(/public.*Example call: \{"url": /s);
  });

  it('without the test predicate, a loopback server stays unreachable', async () => {
    const production = createWebFetchTool({ resolver });
    const error = await fetchText(site$('/article'), production).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolInputError);
    expect((error as Error).message).toContain('127.0.0.1 is loopback');
  });
});

describe('web_fetch over a real server', () => {
  it('dials the vetted address: one lookup, the right Host header, and a rebinding answer never used', async () => {
    let lookups = 0;
    const rebinding: Resolver = async () => (++lookups === 1 ? ['127.0.0.1'] : ['127.0.0.2']);
    const pinned = createWebFetchTool({ resolver: rebinding, isAllowedAddress: loopbackIsPublic });
    const before = hits.length;
    const text = await fetchText(`http://rebind.test:${port}/article`, pinned);
    expect(text).toContain('Fjords of the west');
    expect(lookups).toBe(1);
    expect(hits.slice(before)).toEqual([{ path: '/article', host: `rebind.test:${port}` }]);
    expect(internalHits).toBe(0);
  });

  it('turns HTML into readable text with the title and the final URL', async () => {
    const text = await fetchText(site$('/article'));
    expect(text.startsWith(`Title: Fjord report\nURL: ${site$('/article')}\n`)).toBe(true);
    expect(text).toContain('# Fjords of the west');
    expect(text).toContain('The fjords were carved by glaciers.');
    expect(text).toContain(`[the longer survey](${site$('/more')})`);
    expect(text).toContain('- Sognefjord\n- Hardangerfjord');
    expect(text).not.toMatch(/color:red|injected|<p>/);
  });

  it('passes text and JSON through, decodes gzip, and reports a non-2xx status', async () => {
    expect(await fetchText(site$('/plain'))).toContain(
      'Content type: text/plain\n\njust plain text\nline two',
    );
    expect(await fetchText(site$('/json'))).toContain('{"ok":true,"n":3}');
    expect(await fetchText(site$('/gzip'))).toContain('unzipped text');
    const missing = await fetchText(site$('/missing'));
    expect(missing).toContain('HTTP status: 404');
    expect(missing).toContain('No such page here.');
  });

  it('refuses binary content types, labelled or not', async () => {
    expect(await refusal(site$('/image'))).toMatch(/reads text only: .*\/image is image\/png, a binary type/);
    expect(await refusal(site$('/unlabelled'))).toContain('binary');
  });

  it('follows redirects, re-vetting each hop, and names the final URL', async () => {
    const text = await fetchText(site$('/307'));
    expect(text).toContain(`URL: ${site$('/article')}\nRedirected from: ${site$('/307')}`);
    expect(await fetchText(site$('/chain/5'))).toContain('end of the chain');
  });

  it('refuses a redirect hop to a private name, a private address, metadata or another scheme', async () => {
    expect(await refusal(site$('/to-private-name'))).toMatch(
      /refused the redirect to http:\/\/internal\.test:\d+\/secret .*10\.0\.0\.7 is private/,
    );
    expect(await refusal(site$('/to-private-address'))).toContain('127.0.0.2 is loopback');
    expect(await refusal(site$('/to-metadata'))).toContain('169.254.169.254 is link-local');
    expect(await refusal(site$('/to-file'))).toContain('scheme "file" is not allowed');
    expect(internalHits).toBe(0);
  });

  it('stops after 5 redirects and says so', async () => {
    const outcome = await runTool(tool, { url: site$('/chain/6') }, ctx());
    expect(outcome.ok).toBe(false);
    expect(outcome.content).toMatch(/more than 5 redirects \(the redirect limit\)/);
  });

  it('cuts the body at the size cap and names the limit', async () => {
    const text = await fetchText(site$('/big'));
    expect(text).toContain('larger than the size cap of 49 KB');
    expect(text.split('\n\n')[1]).toBe('x'.repeat(50_000));
  });

  it('gives up at the total timeout and names the limit', async () => {
    const started = Date.now();
    const outcome = await runTool(impatient, { url: site$('/slow') }, ctx());
    expect(outcome).toEqual({
      ok: false,
      content: `web_fetch failed: ${site$('/slow')}: no complete response within the total timeout of 800 ms`,
    });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('shows netguard refusals to the model as corrections', async () => {
    const outcome = await runTool(tool, { url: 'http://169.254.169.254/latest/meta-data/' }, ctx());
    expect(outcome.ok).toBe(false);
    expect(outcome.content).toMatch(/^web_fetch refused http:\/\/169\.254\.169\.254\/latest\/meta-data\/: /);
    expect(await refusal('gopher://site.test/')).toContain('scheme "gopher"');
    expect(await refusal('http://nowhere.test/')).toContain('does not resolve');
  });

  it('never carries caller headers across origins on a redirect (the operator path)', async () => {
    const before = hits.length;
    const outcome = await guardedFetch(site$('/to-other-origin'), {
      resolver,
      vet: { isAllowedAddress: loopbackIsPublic },
      headers: { authorization: 'Bearer operator-secret' },
    });
    expect(outcome).toMatchObject({ kind: 'ok', url: `http://other.test:${port}/plain` });
    expect(hits.slice(before)).toEqual([
      { path: '/to-other-origin', host: `site.test:${port}`, auth: 'Bearer operator-secret' },
      { path: '/plain', host: `other.test:${port}` },
    ]);
  });
});
