// What `doctor` reads from the database offline, the same facts /status and the watchdog use:
// spend against the caps, questions waiting, and digest fires past their grace without a post.
import type { Config } from '../../src/config/load.ts';
import { budget } from '../../src/core/budget.ts';
import type { CheckResult } from '../../src/doctor.ts';
import { DEFAULT_LIMITS } from '../../src/limits.ts';
import type { Db } from '../../src/store/db.ts';
import { permissionRequests } from '../../src/store/permission-requests.ts';

export async function stateChecks(
  db: Db,
  config: Config,
  now = new Date(),
): Promise<Array<[string, CheckResult]>> {
  const spending = budget({ db, now: () => now, caps: config.budget });
  const spend = await spending.spend();
  const refused = await spending.refusal();
  const caps = await spending.caps();
  const spendLine: CheckResult = refused
    ? { status: 'warn', detail: refused }
    : {
        status: 'ok',
        detail: `today $${spend.daily.toFixed(2)}${caps.dailyUsd ? ` of $${caps.dailyUsd.toFixed(2)}` : ' (no daily cap)'}, this month $${spend.monthly.toFixed(2)}${caps.monthlyUsd ? ` of $${caps.monthlyUsd.toFixed(2)}` : ''}`,
      };
  const waiting = await permissionRequests(db).allWaiting(now);
  const late = await db.query<{ id: string; n: number }>(
    `select schedule_id as id, count(*)::int as n from digest_runs
     where fire_at <= $1 and delivered_at is null and notified_at is null group by schedule_id order by schedule_id`,
    [new Date(now.getTime() - DEFAULT_LIMITS.digestGraceMs)],
  );
  const undelivered = late.rows.map((r) => `${r.id} (${r.n})`).join(', ');
  return [
    ['spend', spendLine],
    [
      'questions',
      {
        status: 'ok',
        detail: waiting.length === 0 ? 'none waiting' : `${waiting.length} waiting for an answer`,
      },
    ],
    [
      'digests',
      undelivered
        ? {
            status: 'warn',
            detail: `fires past their grace without a delivered post, not yet reported: ${undelivered}`,
          }
        : { status: 'ok', detail: 'every fire past its grace was delivered or reported' },
    ],
  ];
}
