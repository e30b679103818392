// How a shell result reads, wherever the command ran: a head line, stdout, stderr, and a note on
// what was dropped. Output is kept up to a byte budget shared by both streams; the rest is counted.

export interface Captured {
  chunks: Buffer[];
  dropped: number;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${n} bytes (${Math.round((n / 1024) * 10) / 10} KiB)`;
  return `${n} bytes (${Math.round((n / 1024 / 1024) * 10) / 10} MiB)`;
}

export function section(label: string, stream: Captured): string {
  const text = Buffer.concat(stream.chunks).toString('utf8');
  if (text === '' && stream.dropped === 0) return `--- ${label}: (empty) ---`;
  return `--- ${label} ---\n${text.endsWith('\n') ? text.slice(0, -1) : text}`;
}

/** One budget for both streams of a call: `collect(into)` returns the handler for one of them. */
export function collector(maxOutput: number): (into: Captured) => (chunk: Buffer) => void {
  let kept = 0;
  return (into) => (chunk) => {
    const room = maxOutput - kept;
    if (chunk.length <= room) {
      into.chunks.push(chunk);
      kept += chunk.length;
      return;
    }
    if (room > 0) {
      into.chunks.push(chunk.subarray(0, room));
      kept += room;
    }
    into.dropped += chunk.length - Math.max(0, room);
  };
}

export function resultParts(head: string, out: Captured, err: Captured, maxOutput: number): string[] {
  const parts = [head, section('stdout', out), section('stderr', err)];
  const dropped = out.dropped + err.dropped;
  if (dropped > 0) {
    parts.push(
      `[output capped: kept the first ${formatBytes(maxOutput)} of stdout and stderr together; ` +
        `dropped ${formatBytes(dropped)} more (stdout ${out.dropped}, stderr ${err.dropped}). ` +
        'Narrow the command (head, tail, grep, a redirect to a file) to see the rest.]',
    );
  }
  return parts;
}
