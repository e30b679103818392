// How the model names an outside tool. A server chooses its tool names, so a name never carries
// authority: the server prefix is always there, and the built-in names are never reachable.

/** The longest tool name providers accept. */
export const MAX_TOOL_NAME = 64;
export const SEPARATOR = '__';

/** `NAME__TOOL`: characters outside [A-Za-z0-9_-] become `_`, cut at 64 characters. Pure. */
export function modelToolName(server: string, tool: string): string {
  const raw = [...`${server}${SEPARATOR}${tool}`].map((c) => (/^[A-Za-z0-9_-]$/.test(c) ? c : '_'));
  return raw.slice(0, MAX_TOOL_NAME).join('');
}

export interface NamedTool {
  server: string;
  tool: string;
  name: string;
}

/**
 * Splits tools into the ones whose model name is unique and one line per clash naming both (or
 * all). A clash drops every tool in it: which one the model meant cannot be known. Built-in names
 * count as taken, though the prefix already keeps them apart.
 */
export function settleNames<T extends NamedTool>(
  tools: readonly T[],
  builtins: ReadonlySet<string>,
): { unique: T[]; clashes: string[] } {
  const byName = new Map<string, T[]>();
  for (const t of tools) byName.set(t.name, [...(byName.get(t.name) ?? []), t]);
  const unique: T[] = [];
  const clashes: string[] = [];
  for (const [name, owners] of byName) {
    const [only] = owners;
    if (owners.length === 1 && only && !builtins.has(name)) {
      unique.push(only);
      continue;
    }
    const who = owners.map((t) => `${JSON.stringify(t.tool)} of server ${t.server}`);
    if (builtins.has(name)) who.push('a built-in tool');
    clashes.push(`mcp: ${who.join(' and ')} would both be named ${name}; none of them is offered`);
  }
  return { unique, clashes };
}
