// The dial happens at the address that was vetted. undici would otherwise look the name up again
// when it connects, and a DNS answer that changed in between (rebinding) would reach whatever the
// second answer names. TLS still sends and verifies the hostname, so certificates work as usual.
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';

export interface PinnedAgentOptions {
  /** Limit on establishing the TCP (and TLS) connection; the total timeout still applies on top. */
  connectTimeoutMs?: number;
  /**
   * The dial below the pin. Tests pass a recorder here to see which address would be dialed
   * without touching the network; it only ever receives the vetted address.
   */
  connector?: buildConnector.connector;
}

/**
 * undici's connect options with the destination replaced by the vetted address. Pure.
 * `servername` carries the original hostname for SNI and certificate checks; an IP literal sends
 * no SNI (RFC 6066 forbids it), and plain http needs none.
 */
export function pinConnectOptions(
  options: buildConnector.Options,
  address: string,
  host: string,
): buildConnector.Options {
  const tlsName = options.protocol === 'https:' && isIP(host) === 0 ? host : undefined;
  return { ...options, hostname: address, servername: tlsName };
}

/**
 * An undici Agent for one vetted origin that can only ever dial `address`. Asked to connect to any
 * other host (a bug, or a request it was never meant for) it refuses rather than resolving.
 */
export function pinnedAgent(address: string, host: string, options: PinnedAgentOptions = {}): Agent {
  const dial =
    options.connector ??
    buildConnector({ timeout: options.connectTimeoutMs ?? 10_000, allowH2: false, maxCachedSessions: 0 });
  return new Agent({
    // One origin, one request at a time: no connection is shared with anything unvetted.
    connections: 1,
    pipelining: 1,
    connect(connectOptions, callback) {
      const asked = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1');
      if (asked.toLowerCase() !== host.toLowerCase()) {
        callback(new Error(`pinned agent for ${host} refused to dial ${asked}`), null);
        return;
      }
      dial(pinConnectOptions(connectOptions, address, host), callback);
    },
  });
}
