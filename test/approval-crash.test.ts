// A real child process is SIGKILLed after every single database statement of an approval's
// transition (the owner's decision with the turn it resumes, and the deadline passing). After each
// kill the row and the log agree, and after a restart the outcome is the same one: the approved
// call ran at most once, the expired one never, and the turn ended.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/store/migrate.ts';
import { openPostgres } from '../src/store/open-db.ts';
import { CHANNEL, markModel, OWNER, ROOM, rigAssistant } from './support/approval-rig.ts';
import { type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { postgresUrl, tempDir } from './support/services.ts';

const admin = postgresUrl();
const CHILD = join(import.meta.dirname, 'support/approval-child.ts');
const HOUR = 3_600_000;

function runChild(args: string[]): Promise<{ killed: boolean; stdout: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CHILD, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error && error.signal !== 'SIGKILL') reject(new Error(`child failed: ${stderr || error.message}`));
      else resolve({ killed: error?.signal === 'SIGKILL', stdout });
    });
  });
}

describe.skipIf(!admin)('an approval survives SIGKILL after any statement', () => {
  let model: ScriptedModel;
  let dir: ReturnType<typeof tempDir>;
  const template = `steward_tpl_${process.pid}`;
  let n = 0;

  const withDb = (name: string) => {
    const url = new URL(admin as string);
    url.pathname = `/${name}`;
    return url.toString();
  };
  const sql = async (text: string) => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    try {
      await c.query(text);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    model = await startScriptedModel(markModel);
    dir = tempDir();
    await sql(`drop database if exists ${template}`);
    await sql(`create database ${template}`);
    const db = await openPostgres(withDb(template));
    await migrate(db);
    await db.close();
  });
  afterAll(async () => {
    await model.close();
    await sql(`drop database if exists ${template} with (force)`);
    dir.remove();
  });

  /** A database of the template's shape, with one turn parked on a question for `mark`. */
  async function parked(now: () => Date) {
    const name = `steward_crash_${process.pid}_${n++}`;
    await sql(`create database ${name} template ${template}`);
    const url = withDb(name);
    const marker = join(dir.path, `${name}.marks`);
    const db = await openPostgres(url);
    const a = rigAssistant(db, { modelUrl: model.baseUrl, marker, now });
    await a.handle({ channel: CHANNEL, room: ROOM, senderId: OWNER, text: 'mark it' }, () => {});
    const [prompt] = await a.pendingPrompts(CHANNEL, ROOM);
    await db.close();
    if (!prompt) throw new Error('no question was asked');
    return {
      url,
      marker,
      requestId: prompt.requestId,
      drop: () => sql(`drop database if exists ${name} with (force)`),
    };
  }

  /** The row, the log's decisions for it, and the turn, as one snapshot. */
  async function snapshot(url: string, requestId: string) {
    const db = await openPostgres(url);
    try {
      const row = await db.query<{ status: string; decision: string | null }>(
        'select status, decision from permission_requests where id = $1',
        [requestId],
      );
      const decisions = await db.query<{ decision: string }>(
        `select payload->>'decision' as decision from session_events
         where kind = 'permission_decision' and payload->>'requestId' = $1`,
        [requestId],
      );
      const results = await db.query<{ content: string }>(
        "select payload->>'content' as content from session_events where kind = 'tool_result'",
      );
      const ended = await db.query("select 1 from session_events where kind = 'turn_ended'");
      return {
        status: row.rows[0]?.status,
        rowDecision: row.rows[0]?.decision ?? null,
        logDecisions: decisions.rows.map((r) => r.decision),
        results: results.rows.map((r) => r.content),
        ended: ended.rows.length,
      };
    } finally {
      await db.close();
    }
  }

  const marks = (file: string) =>
    existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;

  /** After the kill: what the restarted steward does (recovery, the sweeper, a late decision). */
  async function restart(url: string, marker: string, now: () => Date, requestId: string) {
    const db = await openPostgres(url);
    try {
      const a = rigAssistant(db, { modelUrl: model.baseUrl, marker, now });
      await a.start({ outbox: () => () => {} });
      await a.online(CHANNEL);
      await a.idle();
      const result = await a.decide(
        { requestId, decision: 'once', channel: CHANNEL, senderId: OWNER },
        () => {},
      );
      if (result.ok) await result.resumed;
      await a.stop();
    } finally {
      await db.close();
    }
  }

  const agrees = (s: Awaited<ReturnType<typeof snapshot>>) => {
    // The row is settled exactly when the log holds its one decision, and they say the same.
    if (s.status === 'pending') expect(s.logDecisions).toEqual([]);
    else expect(s.logDecisions).toEqual([s.rowDecision]);
  };

  it('the owner approves: row and log agree at every kill, and the call runs at most once', async () => {
    const counted = await parked(() => new Date());
    const full = await runChild([
      counted.url,
      'decide',
      '0',
      counted.requestId,
      counted.marker,
      model.baseUrl,
    ]);
    const { statements } = JSON.parse(full.stdout) as { statements: number };
    expect(statements).toBeGreaterThan(5);
    expect(marks(counted.marker)).toBe(1);
    await counted.drop();

    for (let k = 1; k <= statements; k++) {
      const c = await parked(() => new Date());
      const { killed } = await runChild([c.url, 'decide', String(k), c.requestId, c.marker, model.baseUrl]);
      expect(killed, `kill after statement ${k}`).toBe(true);
      agrees(await snapshot(c.url, c.requestId));
      await restart(c.url, c.marker, () => new Date(), c.requestId);
      const after = await snapshot(c.url, c.requestId);
      agrees(after);
      expect(after.status, `after statement ${k}`).toBe('approved');
      expect(after.ended).toBe(1);
      expect(after.results).toHaveLength(1);
      const ran = marks(c.marker);
      expect(ran, `after statement ${k}`).toBeLessThanOrEqual(1);
      // A result that says it ran is true; an interrupted call is reported, never run again.
      if (after.results[0] === 'marked') expect(ran).toBe(1);
      else expect(after.results[0]).toMatch(/interrupted by a restart and was not run again/);
      await c.drop();
    }
  }, 300_000);

  it('the deadline passes: row and log agree at every kill, and the call never runs', async () => {
    const late = () => new Date(Date.now() + HOUR);
    const counted = await parked(() => new Date());
    const full = await runChild([
      counted.url,
      'expire',
      '0',
      counted.requestId,
      counted.marker,
      model.baseUrl,
    ]);
    const { statements } = JSON.parse(full.stdout) as { statements: number };
    expect(statements).toBeGreaterThan(3);
    await counted.drop();

    for (let k = 1; k <= statements; k++) {
      const c = await parked(() => new Date());
      const { killed } = await runChild([c.url, 'expire', String(k), c.requestId, c.marker, model.baseUrl]);
      expect(killed, `kill after statement ${k}`).toBe(true);
      agrees(await snapshot(c.url, c.requestId));
      await restart(c.url, c.marker, late, c.requestId);
      const after = await snapshot(c.url, c.requestId);
      agrees(after);
      expect(after.rowDecision, `after statement ${k}`).toBe('timeout');
      expect(after.ended, `after statement ${k}: ${JSON.stringify(after)}`).toBe(1);
      expect(marks(c.marker)).toBe(0);
      await c.drop();
    }
  }, 300_000);
});
