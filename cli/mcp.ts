import { existsSync } from 'node:fs';
import { redact } from '../src/config/secrets.ts';
import { DEFAULT_MCP_LIMITS } from '../src/limits.ts';
import { type McpManager, mcpManager, type ServerStatus } from '../src/mcp/manager.ts';
import type { Runtime } from './runtime.ts';
import { packageVersion } from './version.ts';

/**
 * The configured MCP servers, not yet started. `report` says a failure once (the log always; the
 * owner too once `tellOwner` is set by whoever runs the channels).
 */
export function buildMcp(
  { config, log }: Runtime,
  builtins: ReadonlySet<string>,
  toolTimeoutMs: number,
): { manager: McpManager; tellOwner(notify: (line: string) => Promise<void>): void } {
  let notify: ((line: string) => Promise<void>) | undefined;
  const manager = mcpManager(config.mcpServers, {
    limits: DEFAULT_MCP_LIMITS,
    log,
    report: (line) => {
      log.warn(line);
      void notify?.(line).catch(() => {});
    },
    ownEnv: process.env,
    // Servers run in the workspace; before steward first made it (steward mcp list), where it was started.
    cwd: existsSync(config.workspace) ? config.workspace : process.cwd(),
    version: packageVersion(),
    redact: (text) => redact(text, config.secrets),
    builtins,
    toolTimeoutMs,
  });
  return {
    manager,
    tellOwner: (fn) => {
      notify = fn;
    },
  };
}

/** One line per server, as `steward mcp list`, /tools and doctor show it. */
export function serverLine(s: ServerStatus): string {
  const flags = [
    s.trusted ? 'trusted' : 'untrusted',
    s.sensitive ? 'sensitive' : '',
    s.indexed ? 'indexed' : '',
  ]
    .filter(Boolean)
    .join(', ');
  const error = s.lastError && s.state !== 'connected' ? ` (${s.lastError})` : '';
  return `${s.name}  ${s.transport}  ${s.state}${error}  ${s.tools.length} tool${s.tools.length === 1 ? '' : 's'}  ${flags}`;
}
