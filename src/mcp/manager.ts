// All configured MCP servers: started together, each on its own (one failing never stops another),
// and the tools they offer now, named, checked and split between eager schemas and the index.
import type { OutsideToolPolicy } from '../permissions/gate.ts';
import type { CheckedTool } from '../tools/registry.ts';
import type { McpServerConfig } from './config.ts';
import { type Connection, type ConnectionDeps, type ServerState, serverConnection } from './connection.ts';
import { modelToolName, settleNames } from './names.ts';
import { claimsOf, compileServerSchema, indexLine, mcpTool, serverSchemaAjv } from './outside-tools.ts';

export interface ServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  state: ServerState;
  /** Model names of the tools offered (deny and clashes left out). */
  tools: string[];
  trusted: boolean;
  sensitive: boolean;
  indexed: boolean;
  lastError?: string;
}

export interface McpManager {
  /** Starts every server; returns at once. */
  start(): void;
  stop(): Promise<void>;
  /** Resolves once every server's first attempt ended, or the wait (or the signal) ran out. */
  ready(signal?: AbortSignal): Promise<void>;
  /** The tools offered now, for the registry. */
  checked(): readonly CheckedTool[];
  /** Model names behind the index: their schemas go out only once the session loaded them. */
  indexed(): ReadonlySet<string>;
  /** One line per indexed tool, the server's words already neutralized. */
  indexLines(): readonly string[];
  /** The operator's rules for one model name, for the permission chain; undefined when not an MCP tool. */
  policy(name: string): OutsideToolPolicy | undefined;
  status(): ServerStatus[];
}

export interface ManagerDeps extends Omit<ConnectionDeps, 'toolsChanged'> {
  /** Built-in tool names: a clash with one is refused like any other. */
  builtins: ReadonlySet<string>;
  /** loop.tool_timeout_s, so a call's own deadline is the one that counts. */
  toolTimeoutMs: number;
}

interface Catalog {
  checked: CheckedTool[];
  indexed: Set<string>;
  indexLines: string[];
  policies: Map<string, OutsideToolPolicy>;
  offered: Map<string, string[]>;
  indexedServers: Set<string>;
}

const EMPTY: Catalog = {
  checked: [],
  indexed: new Set(),
  indexLines: [],
  policies: new Map(),
  offered: new Map(),
  indexedServers: new Set(),
};

export function mcpManager(servers: readonly McpServerConfig[], deps: ManagerDeps): McpManager {
  let catalog = EMPTY;
  const said = new Set<string>();
  const reportOnce = (line: string) => {
    if (said.has(line)) return;
    said.add(line);
    deps.report(line);
  };
  const connections: Connection[] = servers.map((config) =>
    serverConnection(config, { ...deps, toolsChanged: () => rebuild() }),
  );

  function rebuild(): void {
    const ajv = serverSchemaAjv();
    const candidates = connections.flatMap((c) =>
      c
        .tools()
        .filter((info) => !c.config.deny.includes(info.name))
        .map((info) => ({
          server: c.config.name,
          tool: info.name,
          name: modelToolName(c.config.name, info.name),
          info,
          c,
        })),
    );
    const { unique, clashes } = settleNames(candidates, deps.builtins);
    for (const line of clashes) reportOnce(line);
    const next: Catalog = {
      checked: [],
      indexed: new Set(),
      indexLines: [],
      policies: new Map(),
      offered: new Map(),
      indexedServers: new Set(),
    };
    for (const { server, tool, name, info, c } of unique) {
      const compiled = compileServerSchema(ajv, info.inputSchema);
      if (!compiled.ok) {
        reportOnce(
          `mcp: tool ${JSON.stringify(tool)} of server ${server} is not offered: ${compiled.reason}`,
        );
        continue;
      }
      next.checked.push(
        mcpTool(c.config, c, info, name, compiled, {
          descriptionChars: deps.limits.descriptionChars,
          callTimeoutMs: deps.toolTimeoutMs,
        }),
      );
      next.offered.set(server, [...(next.offered.get(server) ?? []), name]);
      next.policies.set(name, {
        server,
        tool,
        allowed: c.config.allow.includes(tool),
        claims: claimsOf(info.annotations),
      });
    }
    for (const c of connections) {
      const names = next.offered.get(c.config.name) ?? [];
      const { index } = c.config;
      if (index === true || (index === 'auto' && names.length > deps.limits.indexAbove)) {
        next.indexedServers.add(c.config.name);
        for (const name of names) next.indexed.add(name);
      }
    }
    for (const entry of next.checked) {
      const policy = next.policies.get(entry.tool.name);
      const info = connections
        .find((c) => c.config.name === policy?.server)
        ?.tools()
        .find((t) => t.name === policy?.tool);
      if (info && next.indexed.has(entry.tool.name)) {
        next.indexLines.push(indexLine(entry.tool.name, info, deps.limits.indexLineChars));
      }
    }
    catalog = next;
  }

  return {
    start() {
      for (const c of connections) c.start();
    },
    async stop() {
      await Promise.all(connections.map((c) => c.stop()));
    },
    async ready(signal) {
      if (connections.length === 0) return;
      let timer: NodeJS.Timeout | undefined;
      let stop = () => {};
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, deps.limits.readyWaitMs);
        stop = () => resolve();
        signal?.addEventListener('abort', stop, { once: true });
      });
      await Promise.race([Promise.all(connections.map((c) => c.settled())), waited]);
      clearTimeout(timer);
      // The turn's signal lives as long as steward: no listener may pile up on it per step.
      signal?.removeEventListener('abort', stop);
    },
    checked: () => catalog.checked,
    indexed: () => catalog.indexed,
    indexLines: () => catalog.indexLines,
    policy: (name) => catalog.policies.get(name),
    status: () =>
      connections.map((c) => {
        const error = c.lastError();
        return {
          name: c.config.name,
          transport: c.config.transport.kind,
          state: c.state(),
          tools: catalog.offered.get(c.config.name) ?? [],
          trusted: c.config.trusted,
          sensitive: c.config.sensitive,
          indexed: catalog.indexedServers.has(c.config.name),
          ...(error ? { lastError: error } : {}),
        };
      }),
  };
}
