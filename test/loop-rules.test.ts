// Table tests for the pure rules of the agent loop: ceilings, the repeat rule, effort dialing, the
// turn state derived from the log, the constraint layer (registry) and the tool runner.

import { describe, expect, it, vi } from 'vitest';
import { type Ceilings, DEFAULT_CEILINGS, stepDirective, trailingRepeats } from '../src/core/ceilings.ts';
import { effortAfter, type StepOutcome } from '../src/core/effort.ts';
import type { SessionEvent, SessionEventData } from '../src/core/session-events.ts';
import { turnState, uniqueCallIds } from '../src/core/turn-state.ts';
import type { Effort, ToolCall } from '../src/gateway/types.ts';
import { createLogger } from '../src/log.ts';
import type { Decision } from '../src/permissions/vocabulary.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import { DEFAULT_TOOL_TIMEOUT_MS, runTool } from '../src/tools/run-tool.ts';
import { type Tool, type ToolContext, ToolInputError } from '../src/tools/types.ts';

const call = (name: string, args = '{}', id = `id-${name}`): ToolCall => ({ id, name, arguments: args });

describe('stepDirective', () => {
  const defaults: Array<[number, string]> = Array.from({ length: 16 }, (_, i) => {
    const step = i + 1;
    return [step, step <= 14 ? 'tools' : step === 15 ? 'warn' : 'final'];
  });
  it.each(defaults)('step %i of the default ceilings, no repeats → %s', (step, expected) => {
    expect(stepDirective(step, 0, DEFAULT_CEILINGS)).toBe(expected);
  });

  it('the defaults are 16 steps and 3 repeats', () => {
    expect(DEFAULT_CEILINGS).toEqual({ maxSteps: 16, maxRepeats: 3 });
  });

  it.each([17, 20, 100])('step %i, past the ceiling, stays final', (step) => {
    expect(stepDirective(step, 0, DEFAULT_CEILINGS)).toBe('final');
  });

  const table: Array<[string, number, number, Ceilings, string]> = [
    ['custom: below the warning', 3, 0, { maxSteps: 5, maxRepeats: 2 }, 'tools'],
    ['custom: the step before the ceiling warns', 4, 0, { maxSteps: 5, maxRepeats: 2 }, 'warn'],
    ['custom: the ceiling is final', 5, 0, { maxSteps: 5, maxRepeats: 2 }, 'final'],
    ['custom: past the ceiling is final', 6, 0, { maxSteps: 5, maxRepeats: 2 }, 'final'],
    ['a one-step ceiling answers at once', 1, 0, { maxSteps: 1, maxRepeats: 3 }, 'final'],
    ['a two-step ceiling warns on step 1', 1, 0, { maxSteps: 2, maxRepeats: 3 }, 'warn'],
    ['repeats below the limit change nothing', 2, 2, DEFAULT_CEILINGS, 'tools'],
    ['repeats at the limit force final early', 2, 3, DEFAULT_CEILINGS, 'final'],
    ['repeats over the limit force final', 5, 7, DEFAULT_CEILINGS, 'final'],
    ['repeats beat the warning step', 15, 3, DEFAULT_CEILINGS, 'final'],
    ['repeats below the limit keep the warning', 15, 2, DEFAULT_CEILINGS, 'warn'],
    ['a custom repeat limit of 1', 1, 1, { maxSteps: 16, maxRepeats: 1 }, 'final'],
    ['a custom repeat limit of 5, 4 repeats', 4, 4, { maxSteps: 16, maxRepeats: 5 }, 'tools'],
  ];
  it.each(table)('%s', (_name, step, repeats, ceilings, expected) => {
    expect(stepDirective(step, repeats, ceilings)).toBe(expected);
  });
});

describe('trailingRepeats', () => {
  const a = call('shell', '{"command":"ls","timeout":5}');
  const table: Array<[string, ToolCall[][], number]> = [
    ['no steps', [], 0],
    ['one step with no calls', [[]], 0],
    ['the latest step has no calls', [[a], [a], []], 0],
    ['one call once', [[a]], 1],
    ['the same call three times', [[a], [a], [a]], 3],
    ['only the trailing run counts', [[a], [call('calculate')], [a], [a]], 2],
    ['a step with no calls breaks the run', [[a], [], [a]], 1],
    [
      'key order and whitespace do not matter',
      [
        [call('shell', '{"command":"ls","timeout":5}')],
        [call('shell', '{ "timeout": 5,\n  "command": "ls" }')],
        [call('shell', '  {"timeout":5,"command":"ls"}  ')],
      ],
      3,
    ],
    [
      'nested key order does not matter',
      [[call('f', '{"a":{"x":1,"y":[{"p":1,"q":2}]}}')], [call('f', '{"a":{"y":[{"q":2,"p":1}],"x":1}}')]],
      2,
    ],
    ['call ids do not matter', [[call('f', '{}', 'a1')], [call('f', '{}', 'b2')]], 2],
    ['empty arguments are the same as {}', [[call('f', '')], [call('f', '{}')], [call('f', '  ')]], 3],
    ['different arguments break the run', [[a], [call('shell', '{"command":"pwd","timeout":5}')]], 1],
    ['a different value type breaks the run', [[call('f', '{"n":5}')], [call('f', '{"n":"5"}')]], 1],
    ['a different tool name breaks the run', [[call('other', a.arguments)], [a]], 1],
    ['invalid JSON compares as trimmed text', [[call('f', '{oops')], [call('f', ' {oops ')]], 2],
    ['invalid JSON that differs breaks the run', [[call('f', '{oops')], [call('f', '{oops!')]], 1],
    [
      'the same two calls per step',
      [
        [a, call('calculate')],
        [a, call('calculate')],
      ],
      2,
    ],
    ['a multi-call step is not its single call', [[a], [a, call('calculate')]], 1],
    ['a single call is not a multi-call step', [[a, call('calculate')], [a]], 1],
    [
      'a multi-call step with other arguments breaks the run',
      [
        [a, call('f', '{"x":1}')],
        [a, call('f', '{"x":2}')],
      ],
      1,
    ],
  ];
  it.each(table.map(([name, steps, expected]) => [name, expected, steps] as const))(
    '%s → %i',
    (_name, expected, steps) => {
      expect(trailingRepeats(steps)).toBe(expected);
    },
  );
});

describe('effortAfter', () => {
  const table: Array<[StepOutcome, Effort]> = [
    ['user_message', 'normal'],
    ['clean', 'low'],
    ['failure', 'normal'],
    ['denial', 'normal'],
  ];
  it.each(table)('%s → %s', (outcome, effort) => {
    expect(effortAfter(outcome)).toBe(effort);
  });
});

describe('turnState', () => {
  const T = 'turn-1';
  /** A log built by hand: each entry is [turnId, data]. */
  const log = (...entries: Array<[string | null, SessionEventData]>): SessionEvent[] =>
    entries.map(([turnId, data], i) => ({
      id: i + 1,
      sessionId: 's1',
      turnId,
      data,
      createdAt: new Date(2025, 0, 1, 0, 0, i),
    }));
  const user = (research?: boolean): [string, SessionEventData] => [
    T,
    { kind: 'user_message', text: 'hi', sender: 'owner', ...(research === undefined ? {} : { research }) },
  ];
  const step = (text: string, calls?: ToolCall[], turn = T): [string, SessionEventData] => [
    turn,
    { kind: 'assistant_message', text, ...(calls ? { toolCalls: calls } : {}), model: 'm', route: 'default' },
  ];
  const started = (c: ToolCall, turn = T): [string, SessionEventData] => [
    turn,
    { kind: 'tool_started', callId: c.id, tool: c.name },
  ];
  const result = (c: ToolCall, isError = false, turn = T): [string, SessionEventData] => [
    turn,
    { kind: 'tool_result', callId: c.id, tool: c.name, content: 'out', isError },
  ];
  const asked = (c: ToolCall, requestId: string): [string, SessionEventData] => [
    T,
    {
      kind: 'permission_requested',
      callId: c.id,
      requestId,
      tool: c.name,
      score: 5,
      layer: 'classifier',
      rationale: 'rm',
    },
  ];
  const decided = (c: ToolCall, requestId: string, decision: Decision): [string, SessionEventData] => [
    T,
    { kind: 'permission_decision', callId: c.id, requestId, decision, decidedBy: 'owner' },
  ];
  const x = call('shell', '{"command":"ls"}', 'c1');
  const y = call('calculate', '{"expression":"1+1"}', 'c2');

  it('an empty log: nothing has happened', () => {
    const state = turnState([], T);
    expect(state).toEqual({
      ended: false,
      research: false,
      steps: [],
      openCalls: [],
      started: new Set(),
      requests: new Map(),
      asked: new Map(),
      decisions: new Map(),
      lastOutcome: 'user_message',
      coerced: false,
      lastText: '',
      answered: false,
    });
  });

  it('a fresh question: user_message, no steps, not research', () => {
    const state = turnState(log(user()), T);
    expect(state.lastOutcome).toBe('user_message');
    expect(state.steps).toEqual([]);
    expect(state.research).toBe(false);
  });

  it.each([
    [true, true],
    [false, false],
    [undefined, false],
  ])('the research flag %s → %s', (flag, expected) => {
    expect(turnState(log(user(flag)), T).research).toBe(expected);
  });

  it('a step with calls and no results: every call is open', () => {
    const state = turnState(log(user(), step('let me look', [x, y])), T);
    expect(state.steps).toEqual([[x, y]]);
    expect(state.openCalls).toEqual([x, y]);
    expect(state.lastText).toBe('let me look');
    expect(state.lastOutcome).toBe('user_message');
  });

  it('a call started but never finished is open and listed as started', () => {
    const state = turnState(log(user(), step('', [x, y]), started(x), result(y), started(y)), T);
    expect(state.openCalls).toEqual([x]);
    expect([...state.started].sort()).toEqual(['c1', 'c2']);
  });

  it('requests and decisions map call ids', () => {
    const state = turnState(
      log(user(), step('', [x, y]), asked(x, 'r1'), asked(y, 'r2'), decided(x, 'r1', 'once')),
      T,
    );
    expect(state.requests).toEqual(
      new Map([
        ['c1', 'r1'],
        ['c2', 'r2'],
      ]),
    );
    expect(state.decisions).toEqual(new Map([['c1', 'once']]));
    expect(state.openCalls).toEqual([x, y]);
  });

  const outcomes: Array<[string, Array<[string, SessionEventData]>, StepOutcome]> = [
    ['every call succeeded → clean', [user(), step('', [x, y]), result(x), result(y)], 'clean'],
    ['one call failed → failure', [user(), step('', [x, y]), result(x), result(y, true)], 'failure'],
    [
      'a denied call → denial',
      [user(), step('', [x]), asked(x, 'r1'), decided(x, 'r1', 'deny'), result(x, true)],
      'denial',
    ],
    [
      'a timed-out request → denial',
      [user(), step('', [x]), asked(x, 'r1'), decided(x, 'r1', 'timeout'), result(x, true)],
      'denial',
    ],
    [
      'denial wins over a failure in the same step',
      [user(), step('', [x, y]), asked(x, 'r1'), decided(x, 'r1', 'deny'), result(x, true), result(y, true)],
      'denial',
    ],
    [
      'approved once and succeeded → clean',
      [user(), step('', [x]), asked(x, 'r1'), decided(x, 'r1', 'once'), result(x)],
      'clean',
    ],
    [
      'approved for the session and failed → failure',
      [user(), step('', [x]), asked(x, 'r1'), decided(x, 'r1', 'session'), result(x, true)],
      'failure',
    ],
    [
      'calls still open → not yet decided (user_message)',
      [user(), step('', [x, y]), result(x)],
      'user_message',
    ],
    ['a step without calls → user_message', [user(), step('the answer')], 'user_message'],
    [
      'an earlier failure, then a clean step → clean',
      [user(), step('', [x]), result(x, true), step('', [y]), result(y)],
      'clean',
    ],
    [
      'an earlier clean step, then a failure → failure',
      [user(), step('', [x]), result(x), step('', [y]), result(y, true)],
      'failure',
    ],
  ];
  it.each(outcomes)('%s', (_name, entries, expected) => {
    expect(turnState(log(...entries), T).lastOutcome).toBe(expected);
  });

  it('steps are kept in order, lastText is the latest step, a no-call step is an empty list', () => {
    const state = turnState(log(user(true), step('one', [x]), result(x), step('two')), T);
    expect(state.steps).toEqual([[x], []]);
    expect(state.lastText).toBe('two');
    expect(state.openCalls).toEqual([]);
  });

  it('a harness note marks the turn as coerced', () => {
    const before = turnState(log(user(true), step('guess')), T);
    expect(before.coerced).toBe(false);
    const after = turnState(
      log(user(true), step('guess'), [T, { kind: 'harness_note', text: 'use tools' }]),
      T,
    );
    expect(after.coerced).toBe(true);
    expect(after.research).toBe(true);
  });

  it.each(['answered', 'failed', 'superseded'] as const)('turn_ended (%s) ends the turn', (outcome) => {
    const state = turnState(log(user(), step('done'), [T, { kind: 'turn_ended', outcome }]), T);
    expect(state.ended).toBe(true);
  });

  it('a model error alone does not end the turn', () => {
    const state = turnState(
      log(user(), [T, { kind: 'model_error', message: 'HTTP 500', route: 'default' }]),
      T,
    );
    expect(state.ended).toBe(false);
  });

  it('events of other turns and of no turn are ignored', () => {
    const other = 'turn-0';
    const events = log(
      [other, { kind: 'user_message', text: 'old', sender: 'owner', research: true }],
      step('old step', [x], other),
      started(x, other),
      [other, { kind: 'harness_note', text: 'x' }],
      [other, { kind: 'turn_ended', outcome: 'answered' }],
      [null, { kind: 'model_error', message: 'boom', route: 'default' }],
      user(),
      step('new step', [y]),
      step('later, elsewhere', [], other),
      result(y, true, other),
    );
    const state = turnState(events, T);
    expect(state).toMatchObject({ ended: false, research: false, coerced: false, lastText: 'new step' });
    expect(state.steps).toEqual([[y]]);
    expect(state.openCalls).toEqual([y]);
    expect(state.started.size).toBe(0);
    expect(state.lastOutcome).toBe('user_message');
  });

  it('call ids reused by a later step (call_0 every step) do not close, start or decide its calls', () => {
    const first = call('shell', '{"command":"rm x"}', 'call_0');
    const second = call('calculate', '{"expression":"2*3"}', 'call_0');
    const events = log(
      user(),
      step('', [first]),
      asked(first, 'r1'),
      decided(first, 'r1', 'deny'),
      started(first),
      result(first, true),
      step('', [second]),
    );
    const state = turnState(events, T);
    expect(state.openCalls).toEqual([second]);
    expect(state.started.has('call_0')).toBe(false);
    expect(state.requests.has('call_0')).toBe(false);
    expect(state.decisions.has('call_0')).toBe(false);
    const finished = turnState([...events, ...log(result(second))], T);
    expect(finished.openCalls).toEqual([]);
    expect(finished.lastOutcome).toBe('clean');
  });
});

describe('the tool registry (constraint layer)', () => {
  const shell: Tool = {
    name: 'shell',
    description: 'Runs a command.',
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string' },
        timeout: { type: 'integer', minimum: 1 },
        options: {
          type: 'object',
          properties: { cwd: { type: 'string' } },
          additionalProperties: false,
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    clamp: (args) => ({ ...args, timeout: Math.min(Number(args.timeout ?? 30), 120) }),
    execute: async () => 'ok',
  };
  const clock: Tool = {
    name: 'current_time',
    description: 'The time.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    execute: async () => 'noon',
  };
  const registry = createToolRegistry([shell, clock]);
  const prepare = (name: string, args: string) => registry.prepare(call(name, args));
  const correction = (name: string, args: string): string => {
    const prepared = prepare(name, args);
    if (prepared.ok) throw new Error(`expected a correction for ${name} ${args}`);
    return prepared.correction;
  };

  it('names, get and specs()', () => {
    expect(registry.names()).toEqual(['shell', 'current_time']);
    expect(registry.get('shell')).toBe(shell);
    expect(registry.get('nope')).toBeUndefined();
    expect(registry.specs()).toEqual([
      { name: 'shell', description: 'Runs a command.', inputSchema: shell.inputSchema },
      { name: 'current_time', description: 'The time.', inputSchema: clock.inputSchema },
    ]);
    for (const spec of registry.specs())
      expect(Object.keys(spec).sort()).toEqual(['description', 'inputSchema', 'name']);
  });

  it('an unknown tool: the correction lists the available tools', () => {
    expect(correction('shel', '{}')).toBe(
      'There is no tool named "shel". Available tools: shell, current_time.',
    );
  });

  const accepted: Array<[string, string, string, Record<string, unknown>]> = [
    [
      'valid arguments, clamp applied',
      'shell',
      '{"command":"ls","timeout":500}',
      { command: 'ls', timeout: 120 },
    ],
    ['clamp fills a default', 'shell', '{"command":"ls"}', { command: 'ls', timeout: 30 }],
    [
      'clamp keeps a value within bounds',
      'shell',
      '{"command":"ls","timeout":7}',
      { command: 'ls', timeout: 7 },
    ],
    ['empty arguments are {}', 'current_time', '', {}],
    ['blank arguments are {}', 'current_time', '  \n ', {}],
    ['{} for a tool without required properties', 'current_time', '{}', {}],
  ];
  it.each(accepted)('%s', (_name, tool, args, expected) => {
    const prepared = prepare(tool, args);
    expect(prepared).toMatchObject({ ok: true, args: expected });
    if (prepared.ok) expect(prepared.tool.name).toBe(tool);
  });

  const rejected: Array<[string, string, string, RegExp[]]> = [
    ['invalid JSON', 'shell', '{"command": "ls"', [/not valid JSON/, /one JSON object/]],
    ['an array', 'shell', '["ls"]', [/must be a JSON object, not \["ls"\]/]],
    ['a number', 'shell', '42', [/must be a JSON object, not 42/]],
    ['null', 'shell', 'null', [/must be a JSON object, not null/]],
    ['a string', 'shell', '"ls"', [/must be a JSON object, not "ls"/]],
    [
      'empty arguments for a tool with a required property',
      'shell',
      '',
      [/missing the required property "command"/],
    ],
    ['a missing required property', 'shell', '{"timeout":5}', [/missing the required property "command"/]],
    ['a wrong type', 'shell', '{"command":5}', [/command must be string/]],
    ['a value out of range', 'shell', '{"command":"ls","timeout":0}', [/timeout must be >= 1/]],
    ['an additional property', 'shell', '{"command":"ls","cmd":"x"}', [/unknown property "cmd"/]],
    [
      'a nested additional property',
      'shell',
      '{"command":"ls","options":{"dir":"/"}}',
      [/options has an unknown property "dir"/],
    ],
    ['a nested wrong type', 'shell', '{"command":"ls","options":{"cwd":1}}', [/options\.cwd must be string/]],
    [
      'several errors at once are all named',
      'shell',
      '{"timeout":"x","extra":1}',
      [/missing the required property "command"/, /timeout must be integer/, /unknown property "extra"/],
    ],
    ['an argument for a tool that takes none', 'current_time', '{"zone":"UTC"}', [/unknown property "zone"/]],
  ];
  it.each(rejected)('%s → a correction naming the problem', (_name, tool, args, patterns) => {
    const text = correction(tool, args);
    expect(text).toContain(tool);
    for (const pattern of patterns) expect(text).toMatch(pattern);
  });

  it('schema corrections say how to go on', () => {
    expect(correction('shell', '{}')).toMatch(/do not match its schema: .*\. Fix them and call again\.$/);
  });

  it('a clamp that throws becomes a correction, not a throw', () => {
    const picky: Tool = {
      ...clock,
      name: 'picky',
      clamp: (args) => {
        if (Object.keys(args).length === 0) throw new ToolInputError('picky needs something to do.');
        throw new Error('bug in clamp');
      },
      inputSchema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
    };
    const reg = createToolRegistry([picky]);
    expect(reg.prepare(call('picky', '{}'))).toEqual({
      ok: false,
      correction: 'picky needs something to do.',
    });
    expect(reg.prepare(call('picky', '{"a":"b"}'))).toMatchObject({
      ok: false,
      correction: expect.stringMatching(/bug in clamp/),
    });
  });

  it.each([
    ['additionalProperties missing', { type: 'object', properties: {} }],
    ['additionalProperties true', { type: 'object', properties: {}, additionalProperties: true }],
    [
      'additionalProperties a schema',
      { type: 'object', properties: {}, additionalProperties: { type: 'string' } },
    ],
  ])('a schema with %s is refused at construction', (_name, inputSchema) => {
    expect(() => createToolRegistry([{ ...clock, name: 'loose', inputSchema }])).toThrow(
      /tool loose: its input schema must set additionalProperties: false/,
    );
  });

  it('two tools with the same name are refused', () => {
    expect(() => createToolRegistry([clock, { ...clock }])).toThrow(/two tools are named current_time/);
  });

  it('an empty registry offers nothing and rejects every call', () => {
    const empty = createToolRegistry([]);
    expect(empty.specs()).toEqual([]);
    expect(empty.prepare(call('shell'))).toMatchObject({ ok: false });
  });
});

describe('runTool', () => {
  const context = (signal = new AbortController().signal): ToolContext => ({
    signal,
    sessionId: 's1',
    workspace: '/tmp',
    log: createLogger('silent', []),
    now: () => new Date('2025-01-01T00:00:00Z'),
  });
  const tool = (execute: Tool['execute'], extra: Partial<Tool> = {}): Tool => ({
    name: 'probe',
    description: 'A test tool.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    execute,
    ...extra,
  });
  /** A tool that never finishes on its own and records the signal it was given. */
  const hanging = (listens: boolean) => {
    const seen: { signal?: AbortSignal } = {};
    const probe = tool(
      (_args, ctx) =>
        new Promise<string>((_resolve, reject) => {
          seen.signal = ctx.signal;
          if (listens)
            ctx.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
        }),
    );
    return { probe, seen };
  };

  it('passes the arguments and returns the text', async () => {
    const probe = tool(async (args) => `got ${JSON.stringify(args)}`);
    expect(await runTool(probe, { a: 1 }, context())).toEqual({ ok: true, content: 'got {"a":1}' });
  });

  it('an empty string is a result', async () => {
    expect(
      await runTool(
        tool(async () => ''),
        {},
        context(),
      ),
    ).toEqual({ ok: true, content: '' });
  });

  const failures: Array<[string, () => Promise<string>, string]> = [
    [
      'a thrown Error',
      async () => {
        throw new Error('disk full');
      },
      'probe failed: disk full',
    ],
    [
      'a thrown ToolInputError: its message only',
      async () => {
        throw new ToolInputError('Give a date after 1970.');
      },
      'Give a date after 1970.',
    ],
    [
      'a thrown string',
      async () => {
        throw 'plain';
      },
      'probe failed: plain',
    ],
    [
      'a synchronous throw',
      () => {
        throw new Error('sync');
      },
      'probe failed: sync',
    ],
    [
      'an object that is not a ToolOutput',
      async () => ({ body: 'x' }) as unknown as string,
      'probe returned no text (got object); this is a bug in the tool.',
    ],
    [
      'a ToolOutput whose text is not text',
      async () => ({ text: 42 }) as unknown as string,
      'probe returned no text (got object); this is a bug in the tool.',
    ],
    [
      'undefined',
      async () => undefined as unknown as string,
      'probe returned no text (got undefined); this is a bug in the tool.',
    ],
    [
      'null',
      async () => null as unknown as string,
      'probe returned no text (got null); this is a bug in the tool.',
    ],
    [
      'a number',
      async () => 42 as unknown as string,
      'probe returned no text (got number); this is a bug in the tool.',
    ],
  ];
  it.each(failures)('%s → ok:false', async (_name, execute, content) => {
    expect(await runTool(tool(execute), {}, context())).toEqual({ ok: false, content });
  });

  it('a tool that hangs past 50 ms is stopped, naming the limit, and its signal is aborted', async () => {
    const { probe, seen } = hanging(false);
    const started = performance.now();
    const outcome = await runTool(probe, {}, context(), 50);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(outcome).toEqual({ ok: false, content: 'probe did not finish within 50 ms and was stopped.' });
    expect(seen.signal?.aborted).toBe(true);
  });

  it.each([
    [999, undefined, '999 ms'],
    [1500, undefined, '1.5 s'],
    [120_000, undefined, '120 s'],
    [undefined, 2_000, '2 s'],
    [undefined, undefined, '60 s'],
  ])('the limit is named as a person reads it: %s / tool %s → %s', async (ms, toolMs, limit) => {
    vi.useFakeTimers();
    try {
      const { probe } = hanging(true);
      const pending = runTool({ ...probe, ...(toolMs ? { timeoutMs: toolMs } : {}) }, {}, context(), ms);
      await vi.advanceTimersByTimeAsync(ms ?? toolMs ?? DEFAULT_TOOL_TIMEOUT_MS);
      expect(await pending).toEqual({
        ok: false,
        content: `probe did not finish within ${limit} and was stopped.`,
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('a limit too long for a timer is no limit, not an instant timeout', async () => {
    const probe = tool(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return 'slow but fine';
    });
    expect(await runTool(probe, {}, context(), Number.POSITIVE_INFINITY)).toEqual({
      ok: true,
      content: 'slow but fine',
    });
    expect(await runTool(probe, {}, context(), 2 ** 40)).toEqual({ ok: true, content: 'slow but fine' });
  });

  it('the limit comes from the tool when none is passed', async () => {
    const { probe } = hanging(true);
    const outcome = await runTool({ ...probe, timeoutMs: 30 }, {}, context());
    expect(outcome).toEqual({ ok: false, content: 'probe did not finish within 30 ms and was stopped.' });
  });

  it('a tool that finishes in time is not stopped', async () => {
    let signal: AbortSignal | undefined;
    const probe = tool(async (_args, ctx) => {
      signal = ctx.signal;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return 'in time';
    });
    expect(await runTool(probe, {}, context(), 200)).toEqual({ ok: true, content: 'in time' });
    expect(signal?.aborted).toBe(false);
  });

  it.each([
    ['listens to its signal', true],
    ['ignores its signal', false],
  ])('the turn is cancelled while a tool that %s runs → cancelled, at once', async (_name, listens) => {
    const { probe, seen } = hanging(listens);
    const parent = new AbortController();
    setTimeout(() => parent.abort(new Error('owner left')), 20);
    const started = performance.now();
    const outcome = await runTool(probe, {}, context(parent.signal), 5_000);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(outcome).toEqual({ ok: false, content: 'probe was cancelled.' });
    expect(seen.signal?.aborted).toBe(true);
  });

  it('a turn cancelled before the call: the tool is not run', async () => {
    const parent = new AbortController();
    parent.abort();
    let ran = false;
    const probe = tool(async () => {
      ran = true;
      return 'ran';
    });
    expect(await runTool(probe, {}, context(parent.signal), 1_000)).toEqual({
      ok: false,
      content: 'probe was cancelled.',
    });
    expect(ran).toBe(false);
  });

  it('leaves no listener on the parent signal', async () => {
    const { signal } = new AbortController();
    const add = vi.spyOn(signal, 'addEventListener');
    const remove = vi.spyOn(signal, 'removeEventListener');
    await runTool(
      tool(async () => 'x'),
      {},
      context(signal),
    );
    await runTool(hanging(false).probe, {}, context(signal), 20);
    expect(add).toHaveBeenCalledTimes(2);
    expect(remove.mock.calls.map((c) => c[1])).toEqual(add.mock.calls.map((c) => c[1]));
  });
});

describe('runTool with a ToolOutput', () => {
  it('passes text and its own trust through', async () => {
    const tool = {
      name: 'paged',
      description: 'd',
      inputSchema: { type: 'object', additionalProperties: false },
      execute: async () => ({ text: 'page', trusted: false }),
    };
    const ctx = {
      signal: new AbortController().signal,
      sessionId: 's',
      workspace: '/tmp',
      log: createLogger('silent', []),
      now: () => new Date(),
    };
    expect(await runTool(tool, {}, ctx)).toEqual({ ok: true, content: 'page', trusted: false });
  });
});

describe('uniqueCallIds', () => {
  const event = (toolCalls: ToolCall[]): SessionEvent => ({
    id: 1,
    sessionId: 's',
    turnId: 't',
    data: { kind: 'assistant_message', text: '', toolCalls, model: 'm', route: 'r' },
    createdAt: new Date(0),
  });
  const c = (id: string): ToolCall => ({ id, name: 'x', arguments: '{}' });
  let n = 0;
  const fresh = () => `fresh${++n}`;

  it.each([
    ['new ids are kept', [c('a'), c('b')], [], ['a', 'b']],
    ['an id used in an earlier step is renamed', [c('call_0')], [event([c('call_0')])], ['fresh']],
    ['an empty id is renamed', [c('')], [], ['fresh']],
    ['a duplicate within the step is renamed', [c('a'), c('a')], [], ['a', 'fresh']],
  ] as const)('%s', (_name, calls, events, expected) => {
    n = 0;
    const ids = uniqueCallIds([...calls], [...events], fresh).map((call) => call.id.replace(/\d+$/, ''));
    expect(ids).toEqual(expected);
  });
});
