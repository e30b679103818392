// What the spend caps read and write: sums of the usage ledger's costs, the once-only notices,
// and today's override of the daily cap. Unpriced calls (local models) cost nothing.
import type { Db } from './db.ts';

export type CapName = 'daily' | 'monthly';
export type CapLevel = 50 | 80 | 100;

export function budgetLedger(db: Db) {
  return {
    /** Dollars spent since `since`, or by one session. */
    async spentSince(filter: { since?: Date; sessionId?: string }): Promise<number> {
      const result = await db.query<{ cost: string | null }>(
        `select sum(cost_usd) as cost from usage
         where ($1::timestamptz is null or created_at >= $1) and ($2::uuid is null or session_id = $2::uuid)`,
        [filter.since ?? null, filter.sessionId ?? null],
      );
      return Number(result.rows[0]?.cost ?? 0);
    },

    /** Records that the owner was told of `level` of a cap in `period`; false when already told. */
    async noteOnce(period: string, cap: CapName, level: CapLevel): Promise<boolean> {
      const inserted = await db.query(
        `insert into budget_notices (period, cap, level) values ($1, $2, $3)
         on conflict do nothing returning level`,
        [period, cap, level],
      );
      return inserted.rows.length > 0;
    },

    async dailyOverride(day: string): Promise<number | undefined> {
      const found = await db.query<{ daily_usd: string }>(
        'select daily_usd from budget_overrides where day = $1::date',
        [day],
      );
      return found.rows[0] ? Number(found.rows[0].daily_usd) : undefined;
    },

    async setDailyOverride(day: string, usd: number): Promise<void> {
      await db.query(
        `insert into budget_overrides (day, daily_usd) values ($1::date, $2)
         on conflict (day) do update set daily_usd = excluded.daily_usd, created_at = now()`,
        [day, usd],
      );
    },
  };
}

export type BudgetLedger = ReturnType<typeof budgetLedger>;
