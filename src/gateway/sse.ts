// Server-sent events, reduced to what model APIs send: `data:` lines grouped into events.

/** Feeds text chunks in any split; returns the data payloads of the events completed so far. */
export function createSseParser(): { push(chunk: string): string[]; end(): string[] } {
  let buffer = '';
  let data: string[] = [];
  let pendingCr = false;
  const takeLines = (final: boolean): string[] => {
    const out: string[] = [];
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = final ? '' : (lines.pop() ?? '');
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) out.push(data.join('\n'));
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line[5] === ' ' ? 6 : 5));
      } else if (line === 'data') {
        // A field line without a colon is that field with an empty value.
        data.push('');
      }
      // Comments (":") and other fields (event, id, retry) carry nothing these APIs need.
    }
    if (final && data.length > 0) {
      out.push(data.join('\n'));
      data = [];
    }
    return out;
  };
  return {
    push(chunk) {
      // A "\r" that ended the previous chunk already ended its line: a "\n" opening this chunk is
      // the second half of that "\r\n", not another (blank) line.
      if (pendingCr && chunk !== '') {
        if (chunk.startsWith('\n')) chunk = chunk.slice(1);
        pendingCr = false;
      }
      buffer += chunk;
      if (buffer.endsWith('\r')) pendingCr = true;
      return takeLines(false);
    },
    end: () => takeLines(true),
  };
}
