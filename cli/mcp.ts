import { mkdirSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
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
    cwd: serverFolder(config.dataDir, config.workspace),
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

/**
 * Where MCP servers start: a folder of steward's own, never the workspace. A server runs outside
 * the shell's jail, and what the model may write there without asking would run with it: `python
 * -m pkg` imports `./pkg` first, `npx pkg` prefers `./node_modules/pkg`. When the data folder
 * lies inside the workspace, the root folder, which the model cannot write either.
 */
export function serverFolder(dataDir: string, workspace: string): string {
  const folder = join(dataDir, 'mcp');
  const fromWorkspace = relative(workspace, folder);
  const outside = fromWorkspace === '..' || fromWorkspace.startsWith('../') || isAbsolute(fromWorkspace);
  if (!outside) return '/';
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  return folder;
}
