// The streamable HTTP transport follows no redirect and reaches no other origin: a server that
// redirects its endpoint elsewhere fails to connect, and the other origin is never contacted.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MCP_LIMITS } from '../src/limits.ts';
import { createLogger } from '../src/log.ts';
import { mcpManager } from '../src/mcp/manager.ts';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
});

async function listen(
  handler: Parameters<typeof createServer>[1],
): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    handler?.(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, hits };
}

function manager(url: string, allowHosts: string[], reports: string[]) {
  return mcpManager(
    [
      {
        name: 'web',
        transport: { kind: 'http', url, allowHosts },
        trusted: false,
        sensitive: false,
        allow: [],
        deny: [],
        index: 'auto',
        where: 'test',
      },
    ],
    {
      limits: { ...DEFAULT_MCP_LIMITS, connectMs: 3_000, restartBaseMs: 60_000 },
      log: createLogger('silent', []),
      report: (line) => reports.push(line),
      ownEnv: {},
      cwd: process.cwd(),
      version: 'test',
      redact: (t) => t,
      builtins: new Set(),
      toolTimeoutMs: 1000,
    },
  );
}

describe('MCP over HTTP, through netguard', () => {
  it('follows no redirect, so another origin is never reached', async () => {
    const elsewhere = await listen((_req, res) => res.end('{}'));
    const redirecting = await listen((_req, res) => {
      res.writeHead(307, { location: `http://localhost:${elsewhere.port}/mcp` }).end();
    });
    const reports: string[] = [];
    const m = manager(`http://127.0.0.1:${redirecting.port}/mcp`, ['127.0.0.1', 'localhost'], reports);
    m.start();
    await m.ready();
    await m.stop();
    expect(redirecting.hits.length).toBeGreaterThan(0);
    expect(elsewhere.hits).toEqual([]);
    expect(m.status()[0]?.state).toBe('stopped');
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/^mcp: server web did not start: /);
  });

  it('refuses loopback unless the operator allowlisted the host, and contacts nothing', async () => {
    const target = await listen((_req, res) => res.end('{}'));
    const reports: string[] = [];
    const m = manager(`http://127.0.0.1:${target.port}/mcp`, ['mcp.example.org'], reports);
    m.start();
    await m.ready();
    await m.stop();
    expect(target.hits).toEqual([]);
    expect(reports[0]).toContain('netguard refused 127.0.0.1');
  });
});
