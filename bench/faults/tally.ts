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
