// Streamable HTTP to an MCP server, through netguard: the URL is vetted when the connection is
// made (loopback and private addresses only for hosts the operator allowlisted), every request is
// dialled to the vetted address, goes to the server's own origin only, and follows no redirect.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { pinConnectOptions } from '../netguard/pinned-agent.ts';
import { type Resolver, systemResolver } from '../netguard/resolve.ts';
import { vetUrl } from '../netguard/vet.ts';

export class BlockedUrlError extends Error {
  override name = 'BlockedUrlError';
}

/** An agent that dials only `address` for `host`, with a small pool (an SSE stream holds one). */
function pinnedPool(address: string, host: string, connectTimeoutMs: number): Agent {
  const dial = buildConnector({ timeout: connectTimeoutMs, allowH2: false, maxCachedSessions: 0 });
  return new Agent({
    connections: 4,
    connect(options, callback) {
      const asked = options.hostname.replace(/^\[(.*)\]$/, '$1');
      if (asked.toLowerCase() !== host.toLowerCase()) {
        callback(new Error(`refused to dial ${asked}: this connection is for ${host}`), null);
        return;
      }
      dial(pinConnectOptions(options, address, host), callback);
    },
  });
}

/**
 * Vets the URL and returns a transport bound to the vetted address, plus the agent to close.
 * Throws BlockedUrlError (with netguard's reason) when the URL may not be reached.
 */
export async function httpServerTransport(
  url: string,
  allowHosts: readonly string[],
  connectTimeoutMs: number,
  resolver: Resolver = systemResolver,
): Promise<{ transport: StreamableHTTPClientTransport; agent: Agent }> {
  const target = new URL(url);
  const vet = await vetUrl(target, resolver, { allowHosts });
  const address = vet.addresses[0];
  if (vet.verdict === 'block' || address === undefined) {
    throw new BlockedUrlError(
      `netguard refused ${target.host}: ${vet.reason} (add it to allow_hosts if you run it)`,
    );
  }
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  const agent = pinnedPool(address, host, connectTimeoutMs);
  const guarded = (input: string | URL, init?: RequestInit): Promise<Response> => {
    const asked = new URL(input instanceof URL ? input.href : input, target);
    if (asked.origin !== target.origin) {
      return Promise.reject(
        new BlockedUrlError(`refused a request to ${asked.origin}: not this server's origin`),
      );
    }
    const { body, headers, method, signal } = init ?? {};
    return undiciFetch(asked, {
      ...(method ? { method } : {}),
      ...(headers ? { headers: headers as Record<string, string> } : {}),
      ...(body !== undefined && body !== null ? { body: body as string } : {}),
      ...(signal ? { signal } : {}),
      redirect: 'error',
      dispatcher: agent,
    }) as unknown as Promise<Response>;
  };
  const transport = new StreamableHTTPClientTransport(target, { fetch: guarded });
  return { transport, agent };
}
