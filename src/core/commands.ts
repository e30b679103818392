import { describeGrant } from '../permissions/chain.ts';
import type { GrantStore } from '../permissions/gate.ts';
import type { Db } from '../store/db.ts';
import type { SessionLog } from '../store/session-log.ts';
import { type UsageTotals, usageTotals } from '../store/usage-ledger.ts';
import { loadedTools } from '../tools/builtin/load-tool.ts';

export const HELP = [
  'Commands:',
  '/new – start a fresh session (the old one stays in the log)',
  '/research <question> – answer from evidence gathered with tools',
  '/cost – model usage and cost today and in this session',
  '/grants – what you allowed for this session; /revoke <id>|all takes it back',
  '/status – channels, database, questions waiting, turns, digests, spend, memory',
  "/budget – spend against the caps; /budget daily <dollars> changes today's cap",
  '/digest add|list|pause|resume|remove|run – scheduled digests (/digest help)',
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

/** `/grants`: the session's standing "allow for this session" grants. */
export async function grantsReport(grants: GrantStore, sessionId: string): Promise<string> {
  const live = await grants.list(sessionId);
  if (live.length === 0) return 'No standing grants in this session.';
  return [...live.map(describeGrant), 'Revoke one with /revoke <id>, or every one with /revoke all.'].join(
    '\n',
  );
}

/** `/revoke <id>|all`. */
export async function revokeGrants(
  grants: GrantStore,
  sessionId: string,
  which: string | undefined,
): Promise<string> {
  if (!which) return 'Usage: /revoke <id> (from /grants) or /revoke all';
  const removed = await grants.revoke(sessionId, which);
  if (removed === 0) return `No live grant matches "${which}"; /grants lists them.`;
  return `Revoked ${removed} grant${removed === 1 ? '' : 's'}. Those calls will ask again.`;
}

export interface CommandContext {
  db: Db;
  sessions: SessionLog;
  grants: GrantStore;
  now: Date;
  channel: string;
  room: string;
  /** Lines for /tools about what is connected; absent: built-in tools only. */
  toolsReport?: () => string[];
}

/** `/tools`: what is connected (from the composition root) and what this session loaded. */
export function toolsAnswer(connected: readonly string[], loaded: ReadonlySet<string>): string {
  const lines =
    connected.length > 0 ? [...connected] : ['Built-in tools only; no MCP servers are configured.'];
  lines.push(
    loaded.size > 0
      ? `Loaded from the index in this session: ${[...loaded].sort().join(', ')}`
      : 'Nothing loaded from the index in this session.',
  );
  return lines.join('\n');
}

/**
 * Answers the commands that need no model, the same in every channel. Undefined when the text is
 * not one of them (including `/research <question>`, which starts a turn).
 */
export async function answerCommand(text: string, ctx: CommandContext): Promise<string | undefined> {
  const [command = '', ...rest] = text.trim().split(/\s+/);
  switch (command) {
    case '/new':
      await ctx.sessions.startFresh(ctx.channel, ctx.room);
      return 'Started a fresh session. The earlier one is kept in the log.';
    case '/help':
    case '/start':
      return HELP;
    case '/research':
      return rest.length === 0 ? 'Usage: /research <question>' : undefined;
    case '/tools': {
      const session = await ctx.sessions.open(ctx.channel, ctx.room);
      return toolsAnswer(ctx.toolsReport?.() ?? [], loadedTools(await ctx.sessions.recent(session.id)));
    }
    case '/cost':
    case '/grants':
    case '/revoke': {
      const session = await ctx.sessions.open(ctx.channel, ctx.room);
      if (command === '/cost') return costReport(ctx.db, session.id, ctx.now);
      if (command === '/grants') return grantsReport(ctx.grants, session.id);
      return revokeGrants(ctx.grants, session.id, rest[0]);
    }
    default:
      return undefined;
  }
}
