import { UsageError } from '../../src/errors.ts';
import type { ServerStatus } from '../../src/mcp/manager.ts';
import { parseCommandArgs } from '../args.ts';
import type { CliIo } from '../io.ts';
import { buildMcp, serverLine } from '../mcp.ts';
import { loadRuntime, type Runtime } from '../runtime.ts';
import { MCP_SYNOPSIS as SYNOPSIS } from './synopses.ts';

/** `steward mcp list`: starts the configured servers, waits for them, prints what they offer, stops them. */
export async function mcpList(io: CliIo, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'list') {
    throw new UsageError(
      sub === undefined
        ? `steward mcp needs a subcommand: steward mcp ${SYNOPSIS}`
        : `unknown subcommand '${sub}' for steward mcp; use steward mcp ${SYNOPSIS}`,
    );
  }
  const { values } = parseCommandArgs('mcp list', rest, {
    tools: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  const runtime = loadRuntime(io, true);
  const servers = await serverStatuses(runtime);
  if (values.json) {
    const shown = servers.map(({ name, transport, state, tools, trusted, sensitive, indexed }) => ({
      name,
      transport,
      state,
      tools,
      trusted,
      sensitive,
      indexed,
    }));
    io.stdout.write(`${JSON.stringify({ servers: shown })}\n`);
    return 0;
  }
  if (servers.length === 0) io.stdout.write('no MCP servers configured (mcp.servers in the config file)\n');
  for (const server of servers) {
    io.stdout.write(`${serverLine(server)}\n`);
    if (values.tools) for (const tool of server.tools) io.stdout.write(`  ${tool}\n`);
  }
  return 0;
}

/** Connects every configured server once (bounded by the connect limit) and reports where each stands. */
export async function serverStatuses(runtime: Runtime): Promise<ServerStatus[]> {
  if (runtime.config.mcpServers.length === 0) return [];
  // Built-in names need no check here: every MCP name carries its server's prefix.
  const { manager } = buildMcp(runtime, new Set(), runtime.config.models.loop.toolTimeoutMs);
  manager.start();
  try {
    await manager.ready();
    return manager.status();
  } finally {
    await manager.stop();
  }
}
