// The fault suite's tool, an MCP server over stdio: `mark {id}` appends `id` to $MARK_FILE after a
// short pause, so a call that runs twice shows as a repeated line, whatever steward's log says.
// `mark_asked` does the same but is not on the allow list, so steward asks the owner first.
import { appendFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const file = process.env.MARK_FILE;
if (!file) throw new Error('MARK_FILE is not set');
const pauseMs = Number(process.env.MARK_PAUSE_MS ?? 300);
const schema = {
  type: 'object',
  properties: { id: { type: 'string' } },
  required: ['id'],
  additionalProperties: false,
};
const server = new Server({ name: 'marks', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: 'mark', description: 'Appends the id to the mark file.', inputSchema: schema },
    { name: 'mark_asked', description: 'Appends the id to the mark file; asks first.', inputSchema: schema },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const id = String((request.params.arguments as { id?: unknown } | undefined)?.id ?? '');
  await new Promise((resolve) => setTimeout(resolve, pauseMs));
  appendFileSync(file, `${id}\n`);
  return { content: [{ type: 'text', text: `marked ${id}` }] };
});
// steward is killed with -9 in these runs: the server goes when its stdin does.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
await server.connect(new StdioServerTransport());
