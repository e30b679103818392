// The loop's own cost per step: a 5-step turn (4 tool steps, then an answer) against an in-process
// provider that answers instantly, on the real store, compared with inserting the same durable rows
// (events, ledger, audit) directly. The durable writes are the floor; the goal is a ratio of at most 2.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAssistant } from '../src/core/assistant.ts';
import type { Provider, ProviderEvent } from '../src/gateway/types.ts';
import { createLogger } from '../src/log.ts';
import { permissionChain } from '../src/permissions/chain.ts';
import { sessionGrants } from '../src/store/grants.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/open-db.ts';
import { builtinPureTools } from '../src/tools/builtin/index.ts';
import { createToolRegistry } from '../src/tools/registry.ts';

const STEPS = 5;

/** Answers instantly: a calculate call on steps 1–4 of each turn, then text. */
function instantProvider(): Provider {
  return {
    kind: 'in-process',
    async *stream(req): AsyncGenerator<ProviderEvent> {
      const toolResults = req.messages
        .slice(req.messages.findLastIndex((m) => m.role === 'user'))
        .filter((m) => m.role === 'tool').length;
      if (toolResults < STEPS - 1) {
        yield {
          type: 'tool_call',
          call: { id: randomUUID(), name: 'calculate', arguments: `{"expression":"${toolResults}+1"}` },
        };
        yield { type: 'usage', inputTokens: 100, outputTokens: 10 };
        yield { type: 'done', stopReason: 'tool_calls' };
      } else {
        yield { type: 'text_delta', text: 'done' };
        yield { type: 'usage', inputTokens: 100, outputTokens: 2 };
        yield { type: 'done', stopReason: 'stop' };
      }
    },
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

export async function loopOverhead(turns = 40, warmup = 5) {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-'));
  const db = await openPglite(join(dir, 'pg'));
  try {
    await migrate(db);
    const assistant = createAssistant({
      db,
      log: createLogger('silent', []),
      owners: { bench: 'owner' },
      workspace: dir,
      gate: permissionChain({ workspace: dir, grants: sessionGrants(db, () => new Date()) }),
      route: {
        name: 'default',
        entries: [{ providerName: 'bench', provider: instantProvider(), model: 'instant' }],
      },
      tools: createToolRegistry(builtinPureTools),
    });
    const loopMs: number[] = [];
    for (let i = 0; i < turns + warmup; i++) {
      // A room per turn, so every turn starts from the same history length.
      const started = performance.now();
      await assistant.handle({ channel: 'bench', room: `r${i}`, senderId: 'owner', text: 'go' }, () => {});
      if (i >= warmup) loopMs.push(performance.now() - started);
    }
    // The floor: every durable row one turn wrote (events, ledger, audit), inserted again directly,
    // with the same payloads, one statement each as the loop does.
    const first = await db.query<{ id: string }>("select id from sessions where room = 'r0'");
    const source = first.rows[0]?.id;
    const events = await db.query<{ kind: string; payload: unknown }>(
      'select kind, payload from session_events where session_id = $1 order by id',
      [source],
    );
    const usage = await db.query<Record<string, unknown>>(
      'select route, provider, model, tokens_in, tokens_out, cost_usd, latency_ms, outcome from usage where session_id = $1',
      [source],
    );
    const audit = await db.query<Record<string, unknown>>(
      'select call_id, tool, args_digest, layer, verdict, score, decision, outcome, duration_ms from audit_log where session_id = $1',
      [source],
    );
    const rows = { events: events.rows.length, usage: usage.rows.length, audit: audit.rows.length };

    const bareMs: number[] = [];
    for (let i = 0; i < turns + warmup; i++) {
      const session = randomUUID();
      const started = performance.now();
      await db.query("insert into sessions (id, channel, room) values ($1, 'bare', $2)", [session, `b${i}`]);
      for (const e of events.rows) {
        await db.query(
          'insert into session_events (session_id, turn_id, kind, payload) values ($1, $2, $3, $4) returning id',
          [session, session, e.kind, JSON.stringify(e.payload)],
        );
      }
      for (const u of usage.rows) {
        await db.query(
          `insert into usage (session_id, route, provider, model, tokens_in, tokens_out, cost_usd, latency_ms, outcome)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [
            session,
            u.route,
            u.provider,
            u.model,
            u.tokens_in,
            u.tokens_out,
            u.cost_usd,
            u.latency_ms,
            u.outcome,
          ],
        );
      }
      for (const a of audit.rows) {
        await db.query(
          `insert into audit_log (session_id, turn_id, call_id, tool, args_digest, layer, verdict, score, decision, outcome, duration_ms)
           values ($1, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [
            session,
            a.call_id,
            a.tool,
            a.args_digest,
            a.layer,
            a.verdict,
            a.score,
            a.decision,
            a.outcome,
            a.duration_ms,
          ],
        );
      }
      if (i >= warmup) bareMs.push(performance.now() - started);
    }
    const loopTurn = median(loopMs);
    const bareTurn = median(bareMs);
    return {
      name: 'loop-overhead',
      store: 'pglite',
      turns,
      stepsPerTurn: STEPS,
      durableRowsPerTurn: rows,
      loopMsPerTurnMedian: round(loopTurn),
      loopMsPerStepMedian: round(loopTurn / STEPS),
      bareInsertMsPerTurnMedian: round(bareTurn),
      ratio: round(loopTurn / bareTurn),
      goal: 'ratio <= 2',
    };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (x: number) => Math.round(x * 100) / 100;
