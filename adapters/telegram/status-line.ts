// Tool activity as one compact line, edited in place as steps progress:
// "⚙️ shell ✓ · calculate ✓ · web_fetch … https://example.org/a".
import { clip } from './html.ts';

export interface ToolActivity {
  callId: string;
  tool: string;
  args: string;
  state: 'running' | 'ok' | 'failed';
}

const MAX_SHOWN = 6;

/** A readable glimpse of a call's arguments: a shell command as itself, other JSON as it is. */
function glimpse(args: string): string {
  try {
    const parsed = JSON.parse(args) as Record<string, unknown>;
    const first = parsed.command ?? parsed.url ?? parsed.expression ?? parsed.path ?? parsed.name;
    if (typeof first === 'string') return first;
  } catch {
    // Not JSON: shown as it is.
  }
  return args;
}

/** Plain text (no markup); the last running call shows a glimpse of its arguments. */
export function statusLine(activity: readonly ToolActivity[]): string {
  const shown = activity.slice(-MAX_SHOWN);
  const hidden = activity.length - shown.length;
  const parts = shown.map((a, i) => {
    const mark = a.state === 'ok' ? '✓' : a.state === 'failed' ? '✗' : '…';
    const last = i === shown.length - 1 && a.state === 'running';
    return last ? `${a.tool} ${mark} ${clip(glimpse(a.args).replace(/\s+/g, ' '), 60)}` : `${a.tool} ${mark}`;
  });
  return `⚙️ ${hidden > 0 ? `+${hidden} · ` : ''}${parts.join(' · ')}`;
}
