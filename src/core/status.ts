// `/status`: one message, no model call. What the core knows (database, questions waiting, turns
// running, spend, memory, version, uptime) plus what the composition root adds (channels and
// digests), each one line.
import type { BudgetCaps } from '../config/load.ts';
import type { PermissionRequest } from '../store/permission-requests.ts';
import { budgetReport, type Spend } from './budget.ts';
import type { Core } from './core.ts';

export interface StatusFacts {
  version: string;
  uptimeMs: number;
  database: { ok: true; kind: string; ms: number } | { ok: false; kind: string; error: string };
  waiting: PermissionRequest[];
  runningRooms: number;
  spend: Spend;
  caps: BudgetCaps;
  rssBytes: number;
  heapBytes: number;
  extra: string[];
  now: Date;
}

const mib = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MiB`;

function duration(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** The message itself. Pure. */
export function formatStatus(f: StatusFacts): string {
  const db = f.database.ok
    ? `database: ${f.database.kind}, answering (${f.database.ms} ms)`
    : `database: ${f.database.kind}, NOT answering (${f.database.error})`;
  const waiting =
    f.waiting.length === 0
      ? ['questions waiting: none']
      : [
          `questions waiting: ${f.waiting.length}`,
          ...f.waiting.map(
            (r) =>
              `  ${r.tool} (score ${r.score}), asked ${duration(f.now.getTime() - r.createdAt.getTime())} ago`,
          ),
        ];
  const [today = '', month = ''] = budgetReport(f.spend, f.caps).split('\n');
  return [
    `steward ${f.version}, up ${duration(f.uptimeMs)}`,
    ...f.extra,
    db,
    ...waiting,
    `turns running: ${f.runningRooms}`,
    `spend: ${today}; ${month}`,
    `memory: ${mib(f.rssBytes)} resident, ${mib(f.heapBytes)} heap`,
  ].join('\n');
}

export async function statusReport(core: Core): Promise<string> {
  const started = performance.now();
  let database: StatusFacts['database'];
  try {
    await core.db.query('select 1');
    database = { ok: true, kind: core.db.kind, ms: Math.round(performance.now() - started) };
  } catch (error) {
    database = { ok: false, kind: core.db.kind, error: (error as Error).message.split('\n')[0] ?? 'error' };
  }
  const now = core.now();
  const safely = async <T>(work: () => Promise<T>, fallback: T) =>
    database.ok ? work().catch(() => fallback) : fallback;
  const memory = process.memoryUsage();
  return formatStatus({
    version: core.version,
    uptimeMs: now.getTime() - core.startedAt.getTime(),
    database,
    waiting: await safely(() => core.requests.allWaiting(now), []),
    runningRooms: core.runner.busy(),
    spend: await safely(() => core.budget.spend(), { daily: 0, monthly: 0 }),
    caps: await safely(() => core.budget.caps(), {}),
    rssBytes: memory.rss,
    heapBytes: memory.heapUsed,
    extra: await core
      .statusLines()
      .catch((error: Error) => [`(status of channels and digests failed: ${error.message})`]),
    now,
  });
}
