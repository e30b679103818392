import type { Db } from './db.ts';

export interface UsageRow {
  sessionId: string | null;
  route: string;
  provider: string;
  model: string;
  tokensIn: number;
  tokensOut: number;
  costUsd: number | null;
  latencyMs: number;
  outcome: 'ok' | 'error';
}

/** One row per model call. */
export async function recordUsage(db: Db, row: UsageRow): Promise<void> {
  await db.query(
    `insert into usage (session_id, route, provider, model, tokens_in, tokens_out, cost_usd, latency_ms, outcome)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      row.sessionId,
      row.route,
      row.provider,
      row.model,
      row.tokensIn,
      row.tokensOut,
      row.costUsd,
      Math.round(row.latencyMs),
      row.outcome,
    ],
  );
}
