import { createHash } from 'node:crypto';
import type { Decision, Layer } from '../permissions/vocabulary.ts';
import type { Db } from './db.ts';

export interface AuditEntry {
  sessionId: string | null;
  turnId: string | null;
  callId: string;
  tool: string;
  /** What ran (the command exactly as approved), or the call's arguments when nothing ran; only their SHA-256 is stored, so no secret reaches the audit log. */
  args: string;
  layer: Layer;
  verdict: 'allow' | 'ask' | 'deny';
  score: number | null;
  decision: Decision | null;
  outcome: 'ok' | 'error' | 'not_run';
  durationMs: number;
}

/** One row per tool call: who decided, what was decided, and how it went. */
export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  await db.query(
    `insert into audit_log (session_id, turn_id, call_id, tool, args_digest, layer, verdict, score, decision, outcome, duration_ms)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      entry.sessionId,
      entry.turnId,
      entry.callId,
      entry.tool,
      createHash('sha256').update(entry.args).digest('hex'),
      entry.layer,
      entry.verdict,
      entry.score,
      entry.decision,
      entry.outcome,
      Math.round(entry.durationMs),
    ],
  );
}
