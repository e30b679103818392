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

export interface UsageTotals {
  calls: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  unpriced: number;
}

/** Sums of the ledger, for /cost: since a moment, or for one session. */
export async function usageTotals(
  db: Db,
  filter: { since?: Date; sessionId?: string },
): Promise<UsageTotals> {
  const result = await db.query<{
    calls: number;
    tokens_in: number;
    tokens_out: number;
    cost: string | null;
    unpriced: number;
  }>(
    `select count(*)::int as calls, coalesce(sum(tokens_in), 0)::int as tokens_in,
            coalesce(sum(tokens_out), 0)::int as tokens_out, sum(cost_usd) as cost,
            count(*) filter (where cost_usd is null)::int as unpriced
     from usage where ($1::timestamptz is null or created_at >= $1) and ($2::uuid is null or session_id = $2::uuid)`,
    [filter.since ?? null, filter.sessionId ?? null],
  );
  const row = result.rows[0];
  return {
    calls: row?.calls ?? 0,
    tokensIn: row?.tokens_in ?? 0,
    tokensOut: row?.tokens_out ?? 0,
    costUsd: Number(row?.cost ?? 0),
    unpriced: row?.unpriced ?? 0,
  };
}
