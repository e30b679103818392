import type { Db } from '../store/db.ts';
import { type UsageTotals, usageTotals } from '../store/usage-ledger.ts';

export const HELP = [
  'Commands:',
  '/new – start a fresh session (the old one stays in the log)',
  '/research <question> – answer from evidence gathered with tools',
  '/cost – model usage and cost today and in this session',
  '/help – this list',
].join('\n');

const formatTotals = (t: UsageTotals) => {
  const cost = t.calls === t.unpriced ? 'no price set' : `$${t.costUsd.toFixed(4)}`;
  const unpriced = t.unpriced > 0 && t.calls !== t.unpriced ? ` (${t.unpriced} unpriced)` : '';
  return `${t.calls} model call${t.calls === 1 ? '' : 's'}, ${t.tokensIn} tokens in, ${t.tokensOut} out, ${cost}${unpriced}`;
};

/** `/cost`: today's totals (UTC day) and this session's, from the usage ledger. */
export async function costReport(db: Db, sessionId: string, now: Date): Promise<string> {
  const midnight = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const today = await usageTotals(db, { since: midnight });
  const session = await usageTotals(db, { sessionId });
  return `Today (UTC): ${formatTotals(today)}\nThis session: ${formatTotals(session)}`;
}
