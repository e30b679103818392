// A turn reads the log from the newest compaction on (SessionLog.recent). That is only safe if what
// the whole log established still holds: the sensitive pin, the egress taint and known hosts, the
// loaded tools, and the conversation the model is shown. Random sessions with compactions at random
// points, on both databases, compare every derived fact of the window with the whole log's.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planCompaction } from '../src/core/compaction.ts';
import { egressContext } from '../src/core/egress-context.ts';
import { touchedSensitive } from '../src/core/sensitive.ts';
import {
  type CarriedFacts,
  rebuildConversation,
  type SessionEvent,
  type SessionEventData,
} from '../src/core/session-events.ts';
import { carriedFacts } from '../src/core/session-facts.ts';
import type { Decision } from '../src/permissions/vocabulary.ts';
import type { Db } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { permissionRequests } from '../src/store/permission-requests.ts';
import { type SessionLog, sessionLog } from '../src/store/session-log.ts';
import { loadedTools } from '../src/tools/builtin/load-tool.ts';
import { backends } from './support/services.ts';

const HOSTS = ['a.example', 'b.example', 'c.example'];
const TOOLS = ['mail_search', 'calendar_list'];
const DECISIONS: Decision[] = ['once', 'session', 'deny', 'timeout', 'superseded'];

/** One piece of a turn, as the loop would write it. */
const piece = fc.oneof(
  fc.record({ kind: fc.constant('tool' as const), sensitive: fc.boolean(), untrusted: fc.boolean() }),
  fc.record({ kind: fc.constant('load' as const), tool: fc.constantFrom(...TOOLS), failed: fc.boolean() }),
  fc.record({
    kind: fc.constant('ask' as const),
    host: fc.constantFrom(...HOSTS),
    decision: fc.constantFrom(...DECISIONS),
  }),
);
const turn = fc.record({
  host: fc.option(fc.constantFrom(...HOSTS), { nil: undefined }),
  sensitive: fc.boolean(),
  quoted: fc.boolean(),
  pieces: fc.array(piece, { maxLength: 3 }),
  /** Compact before this turn's model call, keeping this many recent turns verbatim. */
  compact: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
});
type Turn = typeof turn extends fc.Arbitrary<infer T> ? T : never;

function turnEvents(t: Turn, n: number): SessionEventData[] {
  const out: SessionEventData[] = [];
  for (const [k, p] of t.pieces.entries()) {
    const callId = `call_${n}_${k}`; // unique in the log, as uniqueCallIds keeps them
    switch (p.kind) {
      case 'tool':
        out.push({
          kind: 'assistant_message',
          text: '',
          toolCalls: [{ id: callId, name: 'read', arguments: '{}' }],
          model: 'm',
          route: 'r',
        });
        out.push({ kind: 'tool_started', callId, tool: 'read', sensitive: p.sensitive });
        out.push({
          kind: 'tool_result',
          callId,
          tool: 'read',
          content: `r${n}`,
          isError: false,
          untrusted: p.untrusted,
        });
        break;
      case 'load':
        out.push({
          kind: 'assistant_message',
          text: '',
          toolCalls: [{ id: callId, name: 'load_tool', arguments: JSON.stringify({ name: p.tool }) }],
          model: 'm',
          route: 'r',
        });
        out.push({ kind: 'tool_result', callId, tool: 'load_tool', content: 'ok', isError: p.failed });
        break;
      case 'ask': {
        const requestId = `q${n}.${k}`;
        const args = { url: `https://${p.host}/x` };
        out.push({
          kind: 'assistant_message',
          text: '',
          toolCalls: [{ id: callId, name: 'web_fetch', arguments: JSON.stringify(args) }],
          model: 'm',
          route: 'r',
        });
        out.push({
          kind: 'permission_requested',
          callId,
          requestId,
          tool: 'web_fetch',
          score: 5,
          layer: 'ask',
          rationale: 'r',
          args,
        });
        out.push({
          kind: 'permission_decision',
          callId,
          requestId,
          decision: p.decision,
          decidedBy: 'owner',
        });
        out.push({
          kind: 'tool_result',
          callId,
          tool: 'web_fetch',
          content: 'page',
          isError: false,
          untrusted: true,
        });
        break;
      }
      default:
        throw new Error('unknown piece');
    }
  }
  out.push({ kind: 'assistant_message', text: `answer ${n}`, model: 'm', route: 'r' });
  out.push({ kind: 'turn_ended', outcome: 'answered' });
  return out;
}

/** What a turn derives from what it read; equal for the window and the whole log. */
function derived(events: readonly SessionEvent[]) {
  const egress = egressContext(events);
  return {
    sensitive: touchedSensitive(events),
    tainted: egress.tainted,
    knownHosts: [...egress.knownHosts].sort(),
    loaded: [...loadedTools(events)].sort(),
    conversation: rebuildConversation(events),
  };
}

async function play(log: SessionLog, sessionId: string, turns: Turn[]) {
  for (const [n, t] of turns.entries()) {
    const turnId = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const text = t.host ? `look at https://${t.host}/page` : `message ${n}`;
    const attachments = t.quoted
      ? [{ kind: 'quote' as const, origin: 'someone', content: '<untrusted_content>x</untrusted_content>' }]
      : undefined;
    await log.append(
      sessionId,
      {
        kind: 'user_message',
        text,
        sender: 'owner',
        sensitive: t.sensitive,
        ...(attachments ? { attachments } : {}),
      },
      turnId,
    );
    if (t.compact !== undefined) {
      const read = await log.recent(sessionId);
      const plan = planCompaction(read, 0, t.compact);
      if (plan)
        await log.append(
          sessionId,
          {
            kind: 'compaction',
            throughEventId: plan.throughEventId,
            summary: `s${n}`,
            turns: plan.turns,
            carried: carriedFacts(read),
          },
          turnId,
        );
    }
    for (const data of turnEvents(t, n)) await log.append(sessionId, data, turnId);
    const [whole, recent] = [await log.events(sessionId), await log.recent(sessionId)];
    expect(derived(recent)).toEqual(derived(whole));
  }
}

for (const backend of backends()) {
  describe(`the log a turn reads (${backend.name})`, () => {
    let db: Db;
    let cleanup: () => Promise<void>;
    let log: SessionLog;
    beforeAll(async () => {
      ({ db, cleanup } = await backend.open());
      await migrate(db);
      log = sessionLog(db);
    });
    afterAll(async () => cleanup());

    it('derives what the whole log derives, for random sessions compacted at random points', async () => {
      let rooms = 0;
      let shorter = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(turn, { minLength: 1, maxLength: 8 }), async (turns) => {
          const session = await log.open('test', `room-${rooms++}`);
          await play(log, session.id, turns);
          if ((await log.recent(session.id)).length < (await log.events(session.id)).length) shorter++;
        }),
        { numRuns: 60 },
      );
      // The window really is shorter in most runs, so the equality above was not trivial.
      expect(shorter).toBeGreaterThan(20);
    });

    it('a question is one per call of a turn, so an id a server reuses after a fold is asked again', async () => {
      const s = await log.open('test', 'reused-id');
      const requests = permissionRequests(db);
      const ask = (turnId: string) =>
        requests.create(db, {
          sessionId: s.id,
          turnId,
          callId: 'call_0',
          tool: 'shell',
          args: { command: 'rm x' },
          canonical: 'rm x',
          score: 8,
          layer: 'ask',
          rationale: 'deletes',
          grant: null,
          expiresAt: new Date(Date.now() + 60_000),
        });
      await ask('40000000-0000-4000-8000-000000000000');
      const again = await ask('40000000-0000-4000-8000-000000000001');
      expect(again.status).toBe('pending');
      await expect(ask('40000000-0000-4000-8000-000000000001')).rejects.toThrow();
    });

    it('starts after the folded turns, keeps the compaction and the kept turns', async () => {
      const s = await log.open('test', 'window');
      const ids: number[] = [];
      for (let n = 0; n < 3; n++) {
        const turnId = `10000000-0000-4000-8000-00000000000${n}`;
        ids.push(await log.append(s.id, { kind: 'user_message', text: `m${n}`, sender: 'owner' }, turnId));
        ids.push(await log.append(s.id, { kind: 'turn_ended', outcome: 'answered' }, turnId));
      }
      const carried: CarriedFacts = {
        version: 1,
        sensitive: false,
        tainted: false,
        knownHosts: [],
        loadedTools: [],
      };
      const through = ids[3] ?? 0;
      const compactionId = await log.append(s.id, {
        kind: 'compaction',
        throughEventId: through,
        summary: 's',
        turns: 2,
        carried,
      });
      expect((await log.recent(s.id)).map((e) => e.id)).toEqual([...ids.slice(4), compactionId]);
      expect(await log.events(s.id)).toHaveLength(7);
    });

    it.each([
      ['written before compactions carried facts', undefined],
      [
        'of another facts version',
        { version: 0, sensitive: false, tainted: false, knownHosts: [], loadedTools: [] },
      ],
    ])('reads the whole log past a compaction %s', async (_name, carried) => {
      const s = await log.open('test', `old-${String(carried?.version)}`);
      const turnId = '20000000-0000-4000-8000-000000000000';
      await log.append(
        s.id,
        { kind: 'tool_started', callId: 'c', tool: 'read_mail', sensitive: true },
        turnId,
      );
      const through = await log.append(s.id, { kind: 'turn_ended', outcome: 'answered' }, turnId);
      await log.append(s.id, {
        kind: 'compaction',
        throughEventId: through,
        summary: 's',
        turns: 1,
        ...(carried ? { carried: carried as CarriedFacts } : {}),
      });
      const recent = await log.recent(s.id);
      expect(recent).toHaveLength(3);
      expect(touchedSensitive(recent)).toBe(true);
    });

    it('finds open turns within the window, and tells one turn open or ended by its id', async () => {
      const s = await log.open('test', 'open-turns');
      const t = (n: number) => `50000000-0000-4000-8000-00000000000${n}`;
      await log.append(s.id, { kind: 'user_message', text: 'one', sender: 'owner' }, t(0));
      const through = await log.append(s.id, { kind: 'turn_ended', outcome: 'answered' }, t(0));
      const carried = carriedFacts(await log.events(s.id));
      await log.append(s.id, { kind: 'user_message', text: 'two', sender: 'owner' }, t(1));
      await log.append(
        s.id,
        { kind: 'compaction', throughEventId: through, summary: 's', turns: 1, carried },
        t(1),
      );
      await log.append(s.id, { kind: 'turn_ended', outcome: 'answered' }, t(1));
      await log.append(s.id, { kind: 'user_message', text: 'three', sender: 'owner' }, t(2));
      expect(await log.openTurns(s.id)).toEqual([{ sessionId: s.id, turnId: t(2) }]);
      expect((await log.openTurns()).filter((o) => o.sessionId === s.id)).toEqual([
        { sessionId: s.id, turnId: t(2) },
      ]);
      expect([await log.isOpen(t(0)), await log.isOpen(t(1)), await log.isOpen(t(2))]).toEqual([
        false,
        false,
        true,
      ]);
      expect(await log.isOpen('50000000-0000-4000-8000-000000000009')).toBe(false);
    });

    it('a later compaction without facts does not narrow the read past the last one with them', async () => {
      const s = await log.open('test', 'mixed');
      const t = (n: number) => `30000000-0000-4000-8000-00000000000${n}`;
      await log.append(s.id, { kind: 'user_message', text: 'https://a.example', sender: 'owner' }, t(0));
      const first = await log.append(s.id, { kind: 'turn_ended', outcome: 'answered' }, t(0));
      const carried = carriedFacts(await log.events(s.id));
      await log.append(s.id, { kind: 'compaction', throughEventId: first, summary: 's1', turns: 1, carried });
      await log.append(
        s.id,
        { kind: 'tool_result', callId: 'c', tool: 'fetch', content: 'x', isError: false, untrusted: true },
        t(1),
      );
      const second = await log.append(s.id, { kind: 'turn_ended', outcome: 'answered' }, t(1));
      await log.append(s.id, { kind: 'compaction', throughEventId: second, summary: 's2', turns: 1 });
      const context = egressContext(await log.recent(s.id));
      expect(context.tainted).toBe(true);
      expect([...context.knownHosts]).toEqual(['a.example']);
    });
  });
}

describe('what a compaction folds', () => {
  const log = (...turns: Array<[string, 'ended' | 'open']>) => {
    const events: SessionEvent[] = [];
    const add = (turnId: string, data: SessionEventData) =>
      events.push({ id: events.length + 1, sessionId: 's', turnId, data, createdAt: new Date(0) });
    for (const [turnId, state] of turns) {
      add(turnId, { kind: 'user_message', text: `message of ${turnId}`, sender: 'owner' });
      if (state === 'ended') add(turnId, { kind: 'turn_ended', outcome: 'answered' });
    }
    return events;
  };
  it.each([
    ['every ended turn before the current one', log(['a', 'ended'], ['b', 'ended'], ['now', 'open']), 4, 2],
    ['nothing after a turn still open', log(['a', 'open'], ['b', 'ended'], ['now', 'open']), undefined, 0],
    [
      'only what ended before the open turn began',
      log(['a', 'ended'], ['b', 'open'], ['c', 'ended'], ['now', 'open']),
      2,
      1,
    ],
  ])('%s', (_name, events, through, turns) => {
    const plan = planCompaction(events, 0, 0);
    expect(plan?.throughEventId).toBe(through);
    expect(plan?.turns ?? 0).toBe(turns);
  });

  const many = (count: number) =>
    log(...Array.from({ length: count }, (_, i): [string, 'ended'] => [`t${i}`, 'ended']), ['now', 'open']);
  it.each([
    ['under the budget and at the turn bound: nothing', 3, 3, undefined],
    ['under the budget, one turn past the bound: all but the kept turns', 4, 3, 3],
    ['no bound: the budget alone decides', 50, undefined, undefined],
  ])('%s', (_name, count, maxTurns, folded) => {
    const plan = planCompaction(many(count), 1_000_000, 1, maxTurns);
    expect(plan?.turns).toBe(folded);
  });

  it('folds the summary before it in, as the model is shown only the newest one', () => {
    // Found by review: a second compaction summarized only the turns since the first, so what
    // the first summary held was gone from the conversation.
    const events = log(['a', 'ended'], ['b', 'ended'], ['now', 'open']);
    events.splice(2, 0, {
      id: 2.5,
      sessionId: 's',
      turnId: 'b',
      data: { kind: 'compaction', throughEventId: 2, summary: 'The owner likes tea.', turns: 1 },
      createdAt: new Date(0),
    });
    const plan = planCompaction(events, 0, 0);
    expect(plan?.transcript.split('\n')).toEqual([
      'Summary of what came before: The owner likes tea.',
      'Owner: message of b',
    ]);
    expect(planCompaction(log(['a', 'ended'], ['now', 'open']), 0, 0)?.transcript).toBe(
      'Owner: message of a',
    );
  });
});

describe('facts a compaction carries', () => {
  const at = (id: number, data: SessionEventData): SessionEvent => ({
    id,
    sessionId: 's',
    turnId: 't',
    data,
    createdAt: new Date(0),
  });
  const carried = (facts: Partial<CarriedFacts>): SessionEvent =>
    at(1, {
      kind: 'compaction',
      throughEventId: 0,
      summary: 's',
      turns: 1,
      carried: { version: 1, sensitive: false, tainted: false, knownHosts: [], loadedTools: [], ...facts },
    });

  it.each([
    ['the sensitive pin', { sensitive: true }, (e: SessionEvent[]) => touchedSensitive(e), true],
    ['the taint', { tainted: true }, (e: SessionEvent[]) => egressContext(e).tainted, true],
    [
      'the known hosts',
      { knownHosts: ['a.example'] },
      (e: SessionEvent[]) => [...egressContext(e).knownHosts],
      ['a.example'],
    ],
    [
      'the loaded tools',
      { loadedTools: ['mail_search'] },
      (e: SessionEvent[]) => [...loadedTools(e)],
      ['mail_search'],
    ],
  ])('%s is read from a compaction alone', (_name, facts, read, want) => {
    expect(read([carried(facts)])).toEqual(want);
    expect(read([carried({})])).not.toEqual(want);
  });

  it('carries forward what an earlier compaction carried', () => {
    const events = [
      carried({ sensitive: true, knownHosts: ['b.example'] }),
      at(2, { kind: 'user_message', text: 'see a.example', sender: 'owner' }),
    ];
    expect(carriedFacts(events)).toEqual({
      version: 1,
      sensitive: true,
      tainted: false,
      knownHosts: ['a.example', 'b.example'],
      loadedTools: [],
    });
  });
});
