import { type Tool, ToolInputError } from '../types.ts';

/** What load_tool reads: the index as installed now. */
export interface ToolIndex {
  indexed(): ReadonlySet<string>;
}

const MAX_NAME = 64;

/**
 * `load_tool {name}`: adds one indexed outside tool's schema to the session's later requests. It
 * only reads the index; which tools a session loaded is read back from its log (a successful
 * load_tool result), so it survives restarts. The result is steward's own words: the tool's
 * description and schema arrive with the tools of the next request, labelled as the server's.
 */
export function createLoadToolTool(index: ToolIndex): Tool<{ name: string }> {
  return {
    name: 'load_tool',
    description: [
      'Loads a tool listed in the tool index of your instructions (lines "NAME__TOOL: what it does").',
      'Its schema is sent with your next request, and you can call it from then on in this session.',
      'Argument: name, the exact full name from the index, e.g. "files__read_file". Load only the',
      'tools the task needs. An unknown name is an error.',
    ].join(' '),
    inputSchema: {
      type: 'object',
      properties: {
        name: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_NAME,
          description: 'The exact full name from the index.',
        },
      },
      required: ['name'],
      additionalProperties: false,
    },
    trusted: true,
    async execute(args) {
      const indexed = index.indexed();
      if (indexed.has(args.name)) {
        return `Loaded ${args.name}: its schema comes with your next request; call it then.`;
      }
      throw new ToolInputError(
        indexed.size === 0
          ? 'No tool index is installed, so there is nothing to load.'
          : `No indexed tool is named ${JSON.stringify(args.name)}. Use the exact full name from the tool index (matched exactly, case included).`,
      );
    },
  };
}

/** The tools a session loaded: a load_tool call whose result was not an error, or a compaction's list. Pure. */
export function loadedTools(
  events: ReadonlyArray<{
    data:
      | {
          kind: 'assistant_message';
          toolCalls?: ReadonlyArray<{ id: string; name: string; arguments: string }>;
        }
      | { kind: 'tool_result'; callId: string; isError: boolean }
      | { kind: 'compaction'; carried?: { loadedTools: readonly string[] } }
      | { kind: string };
  }>,
): Set<string> {
  const asked = new Map<string, string>();
  const loaded = new Set<string>();
  for (const { data } of events) {
    if (data.kind === 'compaction' && 'carried' in data) {
      for (const name of data.carried?.loadedTools ?? []) loaded.add(name);
    } else if (data.kind === 'assistant_message' && 'toolCalls' in data) {
      for (const call of data.toolCalls ?? []) {
        if (call.name !== 'load_tool') continue;
        const name = parseName(call.arguments);
        if (name !== undefined) asked.set(call.id, name);
      }
    } else if (data.kind === 'tool_result' && 'callId' in data && !data.isError) {
      const name = asked.get(data.callId);
      if (name !== undefined) loaded.add(name);
    }
  }
  return loaded;
}

function parseName(raw: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(raw);
    const name = (parsed as { name?: unknown } | null)?.name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}
