import type { OutputStore } from '../../offload/output-store.ts';
import { type Tool, ToolInputError } from '../types.ts';

const DEFAULT_LIMIT = 200;
/** A page stays under the offload threshold, so paging never produces yet another ref. */
const PAGE_CHARS = 7000;

/** Pages an offloaded result back. Its trust is the original result's, not its own. */
export function createRetrieveOutputTool(
  store: OutputStore,
): Tool<{ ref: string; offset?: number; limit?: number }> {
  return {
    name: 'retrieve_output',
    description: [
      'Reads back a large tool result that was offloaded. When a result was too large, you got a digest',
      'ending in `retrieve_output {"ref": "<uuid>"}`: call this with that ref to read the full text, page',
      'by page. `offset` is the first line to return (0-based, default 0); `limit` is how many lines',
      `(default ${DEFAULT_LIMIT}, at most 1000). A page is also cut at about ${PAGE_CHARS} characters; the reply says which`,
      'lines you got and the offset of the next page. Refs belong to this session and expire after 7 days.',
      'Example: {"ref": "dc9d6fa2-6f1e-4c1a-9a37-0c0f3e1b2a11", "offset": 400, "limit": 100}',
    ].join(' '),
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['ref'],
      properties: {
        ref: { type: 'string', description: 'The ref from the digest.', minLength: 1, maxLength: 100 },
        offset: { type: 'integer', minimum: 0, description: 'First line to return, 0-based.' },
        limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'How many lines.' },
      },
    },
    async execute(args, ctx) {
      const offset = args.offset ?? 0;
      const page = await store.read(
        args.ref.trim(),
        ctx.sessionId,
        offset,
        args.limit ?? DEFAULT_LIMIT,
        PAGE_CHARS,
      );
      if (!page) {
        throw new ToolInputError(
          `No stored output has the ref "${args.ref}" in this session (it may have expired after 7 days). Use a ref from a digest you received in this session.`,
        );
      }
      const last = page.offset + page.count;
      const more =
        last < page.totalLines
          ? ` Next page: retrieve_output {"ref": "${args.ref}", "offset": ${last}}.`
          : ' This is the end.';
      const header =
        page.count === 0
          ? `[${page.tool} output ${args.ref}: no lines at offset ${offset}; it has ${page.totalLines} lines.]`
          : `[${page.tool} output ${args.ref}: lines ${page.offset}–${last - 1} of ${page.totalLines}.${more}]`;
      return { text: `${header}\n${page.text}`, trusted: page.trusted };
    },
  };
}
