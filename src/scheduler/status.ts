// One line per digest for /status: when it fires next and how its last run went.
import type { Db } from '../store/db.ts';
import { formatFire } from './cron.ts';

export async function digestStatus(db: Db): Promise<string[]> {
  const rows = await db.query<{
    id: string;
    timezone: string;
    paused: boolean;
    next_fire_at: Date | null;
    fire_at: Date | null;
    outcome: string | null;
    delivered_at: Date | null;
  }>(
    `select s.id, s.timezone, s.paused, s.next_fire_at, r.fire_at, r.outcome, r.delivered_at
     from schedules s
     left join lateral (select fire_at, outcome, delivered_at from digest_runs
                        where schedule_id = s.id order by id desc limit 1) r on true
     order by s.id`,
  );
  return rows.rows.map((r) => {
    const next = r.paused
      ? 'paused'
      : r.next_fire_at
        ? `next ${formatFire(new Date(r.next_fire_at), r.timezone)}`
        : 'no next fire';
    const last = r.fire_at
      ? `last ${formatFire(new Date(r.fire_at), r.timezone)}: ${r.outcome}${r.delivered_at ? ', delivered' : r.outcome === 'running' ? '' : ', not delivered'}`
      : 'never run';
    return `digest ${r.id}: ${next}; ${last}`;
  });
}
