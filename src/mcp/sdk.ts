// The MCP SDK (and the zod it brings, over 100 modules) loads with the first server connection,
// so a steward with no MCP servers never loads it.
export async function loadMcpSdk() {
  const [{ Client }, { ErrorCode, McpError }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { Client, ErrorCode, McpError };
}

export type McpSdk = Awaited<ReturnType<typeof loadMcpSdk>>;
