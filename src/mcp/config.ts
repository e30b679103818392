// `mcp.servers.NAME` in the config file: outside tool servers the operator chose. Checked field by
// field here (after the schema), so errors name the server's own keys.
import { ConfigError } from '../errors.ts';

export type McpTransportConfig =
  /** `env` holds the values of exactly the variables the config named, read from steward's environment. */
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string> }
  /** `allowHosts`: hosts the operator approved; only they may be loopback or private. */
  | { kind: 'http'; url: string; allowHosts: string[] };

export type McpIndexMode = 'auto' | boolean;

export interface McpServerConfig {
  name: string;
  transport: McpTransportConfig;
  trusted: boolean;
  sensitive: boolean;
  /** Tools (the server's own names) that run without asking. */
  allow: string[];
  /** Tools (the server's own names) never offered. */
  deny: string[];
  index: McpIndexMode;
  /** Where the entry is in the file, for errors found later. */
  where: string;
}

export interface McpServersSection {
  mcp?: { servers?: Record<string, Record<string, unknown>> };
}

export const SERVER_NAME = /^[a-z0-9_-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The configured servers, in file order; values of the variables they name come from `env`. */
export function resolveMcpServers(
  tree: McpServersSection,
  env: Record<string, string | undefined>,
  where: (key: string) => string,
): McpServerConfig[] {
  const servers = tree.mcp?.servers ?? {};
  return Object.entries(servers).map(([name, entry]) => resolveServer(name, entry, env, where));
}

function resolveServer(
  name: string,
  e: Record<string, unknown>,
  env: Record<string, string | undefined>,
  where: (key: string) => string,
): McpServerConfig {
  const key = `mcp.servers.${name}`;
  const fail = (at: string, problem: string): never => {
    throw new ConfigError(`config: ${where(at)}: ${problem}`);
  };
  if (!SERVER_NAME.test(name)) fail(key, 'a server name uses lowercase letters, digits, _ and -');
  const command = e.command as string | undefined;
  const url = e.url as string | undefined;
  if ((command === undefined) === (url === undefined)) {
    fail(key, 'give either command (a program started over stdio) or url (streamable HTTP), not both');
  }
  let transport: McpTransportConfig;
  if (command !== undefined) {
    if (e.allow_hosts !== undefined) fail(`${key}.allow_hosts`, 'allow_hosts is for a url server only');
    const named: Record<string, string> = {};
    for (const variable of (e.env as string[] | undefined) ?? []) {
      if (!ENV_NAME.test(variable)) fail(`${key}.env`, `${JSON.stringify(variable)} is not a variable name`);
      const value = env[variable];
      if (value === undefined)
        fail(`${key}.env`, `names ${variable}, which is not set in steward's environment`);
      named[variable] = value as string;
    }
    transport = { kind: 'stdio', command, args: (e.args as string[] | undefined) ?? [], env: named };
  } else {
    if (e.args !== undefined || e.env !== undefined) fail(key, 'args and env are for a command server only');
    const parsed = URL.canParse(url as string) ? new URL(url as string) : undefined;
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      fail(`${key}.url`, 'give an http(s) URL, e.g. https://mcp.example.org/mcp');
    }
    transport = {
      kind: 'http',
      url: url as string,
      allowHosts: (e.allow_hosts as string[] | undefined) ?? [],
    };
  }
  return {
    name,
    transport,
    trusted: e.trusted === true,
    sensitive: e.sensitive === true,
    allow: (e.allow as string[] | undefined) ?? [],
    deny: (e.deny as string[] | undefined) ?? [],
    index: (e.index as McpIndexMode | undefined) ?? 'auto',
    where: where(key),
  };
}

/** The `mcp:` part of the file schema. */
export const mcpSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    servers: {
      type: 'object',
      propertyNames: { pattern: SERVER_NAME.source },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          command: { type: 'string', minLength: 1 },
          args: { type: 'array', items: { type: 'string' } },
          env: { type: 'array', items: { type: 'string', pattern: ENV_NAME.source } },
          url: { type: 'string', minLength: 1 },
          allow_hosts: { type: 'array', items: { type: 'string', minLength: 1 } },
          trusted: { type: 'boolean' },
          sensitive: { type: 'boolean' },
          allow: { type: 'array', items: { type: 'string', minLength: 1 } },
          deny: { type: 'array', items: { type: 'string', minLength: 1 } },
          index: { enum: ['auto', true, false] },
        },
      },
    },
  },
} as const;
