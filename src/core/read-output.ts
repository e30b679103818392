import type { OutputReading } from '../channel/port.ts';
import type { Logger } from '../log.ts';
import type { OutputStore } from '../offload/output-store.ts';
import type { Db } from '../store/db.ts';

export type { OutputReading };

/** Lines per page when an output is read whole; each line ends with a newline. */
const OUTPUT_PAGE_LINES = 2000;

/**
 * The whole of a large result stored in this room (any of its sessions), page by page, so a
 * channel can hand it to the owner as a file. Owner only, like everything else.
 */
export async function readStoredOutput(
  deps: {
    db: Db;
    log: Logger;
    owners: Readonly<Record<string, string>>;
    outputs: OutputStore;
    now: () => Date;
  },
  input: { channel: string; room: string; senderId: string; ref: string },
): Promise<OutputReading> {
  const { db, log, now } = deps;
  if (deps.owners[input.channel] !== input.senderId) {
    log.info({ channel: input.channel }, 'refused a stored output to someone other than the owner');
    return { ok: false, reason: 'not_owner', text: 'Not allowed: only the owner reads stored outputs.' };
  }
  const unknown = {
    ok: false,
    reason: 'unknown',
    text: `No stored output ${input.ref} in this chat: unknown, or expired (outputs are kept for a limited time).`,
  } as const;
  if (!/^[0-9a-f-]{36}$/i.test(input.ref)) return unknown;
  const found = await db.query<{ session_id: string; tool: string; bytes: number; lines: number }>(
    `select o.session_id, o.tool, o.bytes, o.lines from tool_outputs o join sessions s on s.id = o.session_id
     where o.ref = $1 and s.channel = $2 and s.room = $3 and o.complete and o.expires_at > $4`,
    [input.ref, input.channel, input.room, now()],
  );
  const row = found.rows[0];
  if (!row) return unknown;
  const { ref } = input;
  const sessionId = row.session_id;
  const lines = Number(row.lines);
  async function* pages(): AsyncGenerator<string> {
    for (let offset = 0; offset < lines; offset += OUTPUT_PAGE_LINES) {
      const page = await deps.outputs.read(ref, sessionId, offset, OUTPUT_PAGE_LINES, Infinity);
      if (!page || page.count === 0) return;
      yield `${page.text}\n`;
    }
  }
  return { ok: true, tool: row.tool, bytes: Number(row.bytes), lines, pages: pages() };
}
