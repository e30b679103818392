// Spend caps over the usage ledger. At 50% and 80% of a cap the owner is told once; at 100% a new
// turn gets one line naming the cap and how to raise it, and makes no model call; a digest pauses
// and says so. Nothing already running is cut mid-answer: caps are checked when a turn starts, and
// a digest's own cap between its steps. Periods are UTC days and months.
import type { BudgetCaps } from '../config/load.ts';
import { type BudgetLedger, budgetLedger, type CapLevel, type CapName } from '../store/budget-ledger.ts';
import type { Db } from '../store/db.ts';

export const CAP_LEVELS: readonly CapLevel[] = [50, 80, 100];

export interface Spend {
  daily: number;
  monthly: number;
}

/** The levels of a cap that `spent` has reached; none without a cap. */
export function levelsReached(spent: number, cap: number | undefined): CapLevel[] {
  if (cap === undefined || cap <= 0) return [];
  return CAP_LEVELS.filter((level) => spent >= (cap * level) / 100);
}

const usd = (amount: number) => `$${amount.toFixed(amount < 10 ? 2 : 0)}`;
const dayKey = (now: Date) => now.toISOString().slice(0, 10);
const monthKey = (now: Date) => now.toISOString().slice(0, 7);

/** The one line a turn gets at a reached cap, or undefined when no cap is reached. Pure. */
export function capRefusal(spend: Spend, caps: BudgetCaps): string | undefined {
  if (caps.dailyUsd !== undefined && spend.daily >= caps.dailyUsd) {
    return `Today's spend cap is reached (${usd(spend.daily)} of ${usd(caps.dailyUsd)}, budget.daily_usd), so no model is called until 00:00 UTC. Raise it for today with /budget daily <dollars>.`;
  }
  if (caps.monthlyUsd !== undefined && spend.monthly >= caps.monthlyUsd) {
    return `This month's spend cap is reached (${usd(spend.monthly)} of ${usd(caps.monthlyUsd)}, budget.monthly_usd), so no model is called until the 1st (UTC). Raise budget.monthly_usd in the config file.`;
  }
  return undefined;
}

/** The notice for a level newly reached. */
export function levelNotice(cap: CapName, level: CapLevel, spent: number, limit: number): string {
  const which = cap === 'daily' ? "today's" : "this month's";
  const then = level === 100 ? ' New turns are refused until it resets or you raise it (/budget).' : '';
  return `Spend: ${level}% of ${which} cap reached (${usd(spent)} of ${usd(limit)}).${then}`;
}

export function budget(deps: { db: Db; now: () => Date; caps: BudgetCaps }) {
  const ledger: BudgetLedger = budgetLedger(deps.db);
  const spend = async (): Promise<Spend> => {
    const now = deps.now();
    const midnight = new Date(`${dayKey(now)}T00:00:00Z`);
    const first = new Date(`${monthKey(now)}-01T00:00:00Z`);
    return {
      daily: await ledger.spentSince({ since: midnight }),
      monthly: await ledger.spentSince({ since: first }),
    };
  };
  // Only a configured daily cap can be raised for today: without one, no model call pays a lookup.
  const caps = async (): Promise<BudgetCaps> => {
    if (deps.caps.dailyUsd === undefined) return deps.caps;
    const raised = await ledger.dailyOverride(dayKey(deps.now()));
    return raised === undefined ? deps.caps : { ...deps.caps, dailyUsd: raised };
  };
  return {
    spend,
    caps,
    /** Before a turn: the refusal line when a cap is reached. */
    async refusal(): Promise<string | undefined> {
      if (deps.caps.dailyUsd === undefined && deps.caps.monthlyUsd === undefined) return undefined;
      return capRefusal(await spend(), await caps());
    },
    /** After a model call: the notices of levels crossed now, each said once per period. */
    async crossed(): Promise<string[]> {
      const current = await caps();
      if (current.dailyUsd === undefined && current.monthlyUsd === undefined) return [];
      const spent = await spend();
      const now = deps.now();
      const notices: string[] = [];
      const check = async (cap: CapName, amount: number, limit: number | undefined, period: string) => {
        for (const level of levelsReached(amount, limit)) {
          if (limit !== undefined && (await ledger.noteOnce(`${period}:${limit}`, cap, level)))
            notices.push(levelNotice(cap, level, amount, limit));
        }
      };
      await check('daily', spent.daily, current.dailyUsd, dayKey(now));
      await check('monthly', spent.monthly, current.monthlyUsd, monthKey(now));
      return notices;
    },
    /** Between a digest's steps: its one-run cap. */
    async digestRefusal(sessionId: string): Promise<string | undefined> {
      const cap = deps.caps.perDigestUsd;
      if (cap === undefined) return undefined;
      const spent = await ledger.spentSince({ sessionId });
      if (spent < cap) return undefined;
      return `this digest run reached its cap (${usd(spent)} of ${usd(cap)}, budget.per_digest_usd) and was stopped`;
    },
    /** `/budget` and `/budget daily <dollars>`. */
    async command(args: string[]): Promise<string> {
      if (args[0] === 'daily') {
        if (deps.caps.dailyUsd === undefined) {
          return 'No daily cap is configured, so there is nothing to change; set budget.daily_usd in the config file.';
        }
        const amount = Number(args[1]);
        if (!Number.isFinite(amount) || amount <= 0)
          return 'Usage: /budget daily <dollars>, e.g. /budget daily 5';
        await ledger.setDailyOverride(dayKey(deps.now()), amount);
        return `Today's cap is now ${usd(amount)} (until 00:00 UTC; budget.daily_usd applies again tomorrow).`;
      }
      if (args.length > 0) return "Usage: /budget, or /budget daily <dollars> to change today's cap";
      return budgetReport(await spend(), await caps());
    },
  };
}

export type Budget = ReturnType<typeof budget>;

/** `/budget`: each cap with today's and this month's spend. Pure. */
export function budgetReport(spend: Spend, caps: BudgetCaps): string {
  const line = (what: string, spent: number, cap: number | undefined, key: string) =>
    cap === undefined
      ? `${what}: ${usd(spent)} (no cap; set ${key})`
      : `${what}: ${usd(spent)} of ${usd(cap)} (${Math.floor((spent / cap) * 100)}%)`;
  return [
    line('Today (UTC)', spend.daily, caps.dailyUsd, 'budget.daily_usd'),
    line('This month', spend.monthly, caps.monthlyUsd, 'budget.monthly_usd'),
    caps.perDigestUsd === undefined ? 'Per digest run: no cap' : `Per digest run: ${usd(caps.perDigestUsd)}`,
    "Change today's cap with /budget daily <dollars>.",
  ].join('\n');
}
