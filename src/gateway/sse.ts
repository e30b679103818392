// Server-sent events, reduced to what model APIs send: `data:` lines grouped into events.

/** Feeds text chunks in any split; returns the data payloads of the events completed so far. */
export function createSseParser(): { push(chunk: string): string[]; end(): string[] } {
  let buffer = '';
  let data: string[] = [];
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
      buffer += chunk;
      // A trailing "\r" may be the first half of "\r\n"; wait for the next chunk to decide.
      if (buffer.endsWith('\r')) return [];
      return takeLines(false);
    },
    end: () => takeLines(true),
  };
}
