// doctor's offline view of the state /status and the watchdog report: spend against the caps,
// questions waiting, digest fires past their grace with no delivered post.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateChecks } from '../cli/commands/doctor-state.ts';
import { loadConfig } from '../src/config/load.ts';
import type { Db } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { embeddedBackend } from './support/services.ts';

describe('doctor reads the state offline', () => {
  let db: Db;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ db, cleanup } = await embeddedBackend.open());
    await migrate(db);
  });
  afterAll(() => cleanup());

  it('names spend at a cap, and fires that were neither delivered nor reported', async () => {
    const config = { ...loadConfig({ STEWARD_DATA_DIR: '/tmp/unused' }), budget: { dailyUsd: 1 } };
    const now = new Date();
    expect(Object.fromEntries((await stateChecks(db, config, now)).map(([n, r]) => [n, r.status]))).toEqual({
      spend: 'ok',
      questions: 'ok',
      digests: 'ok',
    });
    await db.query(
      `insert into usage (session_id, route, provider, model, tokens_in, tokens_out, cost_usd, latency_ms, outcome)
       values (null, 'default', 'default', 'm', 1, 1, 1.5, 1, 'ok')`,
    );
    await db.query(
      `insert into digest_runs (schedule_id, fire_at, trigger, outcome, started_at)
       values ('news', $1, 'schedule', 'failed', $1)`,
      [new Date(now.getTime() - 3_600_000)],
    );
    const checks = Object.fromEntries(await stateChecks(db, config, now));
    expect(checks.spend).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/budget\.daily_usd/),
    });
    expect(checks.digests).toMatchObject({ status: 'warn', detail: expect.stringContaining('news (1)') });
  });
});
