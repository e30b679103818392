// Counting, from what the platform recorded and the tool's own file: never from steward's log.
import { existsSync, readFileSync } from 'node:fs';

export interface Row {
  scenario: string;
  runs: number;
  messages: number;
  replies: number;
  duplicates: number;
  losses: number;
  doubleRuns: number;
  p50Ms: number | null;
  p95Ms: number | null;
  notes?: string;
  /** The runner's step that produced the row (FAULTS_ONLY names). */
  step?: string;
}

export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number);
}

/** Lines the mark tool wrote, and how many ids it wrote more than once. */
export function markRuns(file: string): { lines: string[]; doubles: number } {
  const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
  const seen = new Map<string, number>();
  for (const id of lines) seen.set(id, (seen.get(id) ?? 0) + 1);
  let doubles = 0;
  for (const n of seen.values()) doubles += Math.max(0, n - 1);
  return { lines, doubles };
}

/** Per expected reply text: how many messages show it. */
export function countReplies(
  texts: string[],
  expected: string[],
): { replies: number; duplicates: number; losses: number; lost: string[] } {
  let replies = 0;
  let duplicates = 0;
  const lost: string[] = [];
  for (const want of expected) {
    const n = texts.filter((t) => t.includes(want)).length;
    replies += Math.min(n, 1);
    duplicates += Math.max(0, n - 1);
    if (n === 0) lost.push(want);
  }
  return { replies, duplicates, losses: lost.length, lost };
}

/**
 * Polls the platform's texts (`look` also answers questions meanwhile) until every expected text
 * shows, noting when each was first seen; false at the deadline.
 */
export async function awaitTexts(
  look: () => Promise<string[]>,
  expected: string[],
  timeoutMs: number,
  intervalMs: number,
  seenAt?: Map<string, number>,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const texts = await look();
    let all = true;
    for (const want of expected) {
      if (texts.some((t) => t.includes(want))) {
        if (seenAt && !seenAt.has(want)) seenAt.set(want, Date.now());
      } else all = false;
    }
    if (all) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** What one scenario's run shows: replies counted against what was asked, latencies, double runs. */
export interface Outcome {
  scenario: string;
  runs: number;
  /** The bot's messages as the platform recorded them. */
  texts: string[];
  expected: string[];
  /** When each expected reply's message was sent, and when its reply was first seen. */
  sent: Map<string, number>;
  seen: Map<string, number>;
  markFile: string;
  notes?: string;
}

export function replyRow(o: Outcome): Row {
  const counted = countReplies(o.texts, o.expected);
  const ms = [...o.sent].flatMap(([k, at]) => (o.seen.has(k) ? [(o.seen.get(k) as number) - at] : []));
  const lost = counted.lost.length ? `lost: ${counted.lost.join(' / ')}` : '';
  const said = [o.notes, lost].filter(Boolean).join('; ');
  return {
    scenario: o.scenario,
    runs: o.runs,
    messages: o.expected.length,
    replies: counted.replies,
    duplicates: counted.duplicates,
    losses: counted.losses,
    doubleRuns: markRuns(o.markFile).doubles,
    p50Ms: percentile(ms, 50),
    p95Ms: percentile(ms, 95),
    ...(said ? { notes: said } : {}),
  };
}

export function table(rows: Row[]): string {
  const head = [
    'scenario',
    'runs',
    'messages',
    'replies',
    'duplicates',
    'losses',
    'double runs',
    'p50 reply ms',
    'p95 reply ms',
  ];
  const body = rows.map((r) => [
    r.scenario,
    String(r.runs),
    String(r.messages),
    String(r.replies),
    String(r.duplicates),
    String(r.losses),
    String(r.doubleRuns),
    r.p50Ms === null ? '-' : String(r.p50Ms),
    r.p95Ms === null ? '-' : String(r.p95Ms),
  ]);
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...body.map((c) => `| ${c.join(' | ')} |`),
  ].join('\n');
}
