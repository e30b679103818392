// The compact, deterministic stand-in a model gets for a large tool result. Built while the output
// streams past, so memory stays bounded whatever the size: only the kept lines are held.

const HEAD_LINES = 30;
const TAIL_LINES = 10;
const ERROR_LINES = 8;
/** Kept lines are cut here, so the digest stays well under 8 KiB however long the lines are. */
const LINE_CHARS = 120;

const ERROR_LOOKING =
  /\b(error|errors|failed|failure|fatal|exception|panic|traceback|denied|refused|not found|segmentation fault|critical)\b/i;

export interface DigestBuilder {
  push(chunk: string): void;
  /** Totals so far (bytes as UTF-8). */
  readonly bytes: number;
  readonly lines: number;
  finish(tool: string, ref: string): string;
}

export function createDigestBuilder(): DigestBuilder {
  const head: string[] = [];
  const tail: string[] = [];
  const errors: Array<{ line: number; text: string }> = [];
  let bytes = 0;
  let lines = 0;
  // The line being read: only its first LINE_CHARS characters are kept.
  let current = '';
  let currentLong = false;

  const cut = (text: string, long: boolean) =>
    long || text.length > LINE_CHARS ? `${text.slice(0, LINE_CHARS)}…` : text;
  const endLine = () => {
    const text = cut(current, currentLong);
    lines++;
    if (head.length < HEAD_LINES) head.push(text);
    else {
      tail.push(text);
      if (tail.length > TAIL_LINES) {
        const leaving = tail.shift() as string;
        // A line leaving the tail window is "in between": keep it if it looks like an error.
        const lineNo = lines - TAIL_LINES;
        if (errors.length < ERROR_LINES && ERROR_LOOKING.test(leaving))
          errors.push({ line: lineNo, text: leaving });
      }
    }
    current = '';
    currentLong = false;
  };

  return {
    push(chunk) {
      if (chunk === '') return;
      bytes += Buffer.byteLength(chunk);
      let start = 0;
      for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
        if (!currentLong)
          current += chunk.slice(start, Math.min(nl, start + LINE_CHARS + 1 - current.length));
        if (current.length > LINE_CHARS) currentLong = true;
        endLine();
        start = nl + 1;
      }
      if (start < chunk.length && !currentLong) {
        current += chunk.slice(start, start + LINE_CHARS + 1 - current.length);
        if (current.length > LINE_CHARS) currentLong = true;
      } else if (start < chunk.length) currentLong = true;
    },
    get bytes() {
      return bytes;
    },
    get lines() {
      return lines + (current !== '' || currentLong ? 1 : 0);
    },
    finish(tool, ref) {
      if (current !== '' || currentLong) endLine();
      const total = lines;
      const out = [`[${tool} output offloaded: ${bytes} bytes, ${total} lines.`];
      out.push(`First ${head.length} lines:`, ...head);
      if (errors.length > 0) {
        out.push(`Error-looking lines in between (up to ${ERROR_LINES}):`);
        for (const e of errors) out.push(`${e.line}: ${e.text}`);
      }
      if (tail.length > 0) out.push(`Last ${tail.length} lines:`, ...tail);
      out.push(`Full content: retrieve_output {"ref": "${ref}"} (pages by line: add "offset" and "limit")]`);
      return out.join('\n');
    },
  };
}
