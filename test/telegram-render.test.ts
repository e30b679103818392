// The Telegram adapter's pure parts: Markdown to Telegram HTML, splitting at 4096 characters,
// button data, the prompt and stored-output views, and the payloads of the calls the emulator
// cannot answer (setMyCommands, sendChatAction, sendDocument).
import fc from 'fast-check';
import { GrammyError, HttpError } from 'grammy';
import { describe, expect, it } from 'vitest';
import { CALLBACK_DATA_LIMIT, decodeButton, encodeButton } from '../adapters/telegram/callback-data.ts';
import { fatalTelegramError, TelegramAuthError, TelegramConflictError } from '../adapters/telegram/errors.ts';
import { escapeHtml, htmlToPlain } from '../adapters/telegram/html.ts';
import { markdownToTelegramHtml } from '../adapters/telegram/markdown-html.ts';
import {
  BOT_COMMANDS,
  commandsPayload,
  documentPayload,
  offloadedView,
  outputDocument,
  typingPayload,
} from '../adapters/telegram/payloads.ts';
import { CAPTION_LIMIT, promptPlan, settledLine } from '../adapters/telegram/prompt-view.ts';
import { MESSAGE_LIMIT, splitTelegramHtml } from '../adapters/telegram/split-html.ts';
import { statusLine, type ToolActivity } from '../adapters/telegram/status-line.ts';
import { normalizeCommand } from '../adapters/telegram/update-router.ts';
import type { PermissionPrompt } from '../src/channel/port.ts';

const TAGS = new Set(['b', 'i', 's', 'u', 'code', 'pre', 'a', 'blockquote']);

/** Throws unless `html` uses only Telegram's tags, properly nested, and escapes every other `<` and `&`. */
function assertTelegramHtml(html: string): void {
  const stack: string[] = [];
  for (const m of html.matchAll(/<(\/?)([a-z]+)([^>]*)>|<|&(?!(amp|lt|gt|quot);)/g)) {
    if (m[2] === undefined) throw new Error(`unescaped ${m[0]} in ${html}`);
    const name = m[2];
    if (!TAGS.has(name)) throw new Error(`tag ${name} in ${html}`);
    if (m[1]) {
      if (stack.pop() !== name) throw new Error(`unbalanced </${name}> in ${html}`);
    } else {
      if (m[3] && !/^ (href="[^"<>]*"|class="language-[\w+#.-]+")$/.test(m[3]))
        throw new Error(`attribute ${m[3]}`);
      stack.push(name);
    }
  }
  if (stack.length > 0) throw new Error(`unclosed ${stack.join(',')} in ${html}`);
}

describe('Markdown to Telegram HTML', () => {
  it.each([
    ['plain text', 'Hello there', 'Hello there'],
    ['everything escaped', 'a < b && c > d', 'a &lt; b &amp;&amp; c &gt; d'],
    [
      'raw HTML is text',
      '<b>hi</b> <script>x</script>',
      '&lt;b&gt;hi&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;',
    ],
    ['an entity is shown as written', 'x &amp; y', 'x &amp;amp; y'],
    ['bold, italic, strike', '**b** *i* _i_ ~~s~~', '<b>b</b> <i>i</i> <i>i</i> <s>s</s>'],
    ['inline code escaped', 'run `a<b && c`', 'run <code>a&lt;b &amp;&amp; c</code>'],
    [
      'fenced code with language',
      '```js\nif (a < b) {}\n```',
      '<pre><code class="language-js">if (a &lt; b) {}</code></pre>',
    ],
    ['fenced code without language', '```\n<x>\n```', '<pre>&lt;x&gt;</pre>'],
    ['an odd language is dropped', '```a"b\nx\n```', '<pre>x</pre>'],
    ['heading is bold', '# Title\n\ntext', '<b>Title</b>\n\ntext'],
    ['bullets', '- a\n- b', '• a\n• b'],
    ['nested list', '- a\n  - b', '• a\n  • b'],
    ['ordered list keeps its start', '3. x\n4. y', '3. x\n4. y'],
    ['task list', '- [x] done\n- [ ] todo', '• ☑ done\n• ☐ todo'],
    ['quote', '> said', '<blockquote>said</blockquote>'],
    ['a quote in a quote is flattened', '> a\n> > b', '<blockquote>a\n\nb</blockquote>'],
    [
      'https link',
      '[site](https://x.org/?a=1&b="2")',
      '<a href="https://x.org/?a=1&amp;b=&quot;2&quot;">site</a>',
    ],
    ['link text is plain', '[**bold** `code`](https://x.org)', '<a href="https://x.org">bold code</a>'],
    ['javascript link loses its target', '[click](javascript:alert(1))', 'click'],
    ['image becomes a link', '![cat](https://x.org/c.png)', '<a href="https://x.org/c.png">cat</a>'],
    ['table as preformatted text', '| a | b |\n|---|--:|\n| 1 | 22 |', '<pre>a |  b\n--+---\n1 | 22</pre>'],
    ['rule', 'a\n\n---\n\nb', 'a\n\n──────────\n\nb'],
    ['hard break', 'a  \nb', 'a\nb'],
    ['escaped markdown', '\\*not em\\*', '*not em*'],
  ])('%s', (_name, markdown, html) => {
    expect(markdownToTelegramHtml(markdown)).toBe(html);
    assertTelegramHtml(html);
  });

  it('turns any text into well-formed Telegram HTML that shows every character of plain input', () => {
    const alphabet = fc.constantFrom(...'ab <>&"\'*_`~[]()#>-|!\\\n 1.'.split(''));
    fc.assert(
      fc.property(fc.string({ unit: alphabet, maxLength: 120 }), (markdown) => {
        assertTelegramHtml(markdownToTelegramHtml(markdown));
      }),
      { numRuns: 400 },
    );
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'ab <&"\''.split('')), maxLength: 80 }), (text) => {
        const html = markdownToTelegramHtml(text);
        expect(htmlToPlain(html).replace(/\s+/g, ' ').trim()).toBe(text.replace(/\s+/g, ' ').trim());
      }),
    );
  });
});

describe('splitting at 4096 characters', () => {
  it('leaves a short text alone and drops empty input', () => {
    expect(splitTelegramHtml('<b>hi</b>')).toEqual(['<b>hi</b>']);
    expect(splitTelegramHtml('')).toEqual([]);
    expect(splitTelegramHtml('  \n ')).toEqual([]);
  });

  it.each([
    ['prefers a line end', 'aaaa bbbb\ncccc dddd', 14, ['aaaa bbbb', 'cccc dddd']],
    ['then a space', 'aaaa bbbb cccc', 10, ['aaaa bbbb', 'cccc']],
    ['closes and reopens tags', '<b>aaaa bbbb cccc</b>', 16, ['<b>aaaa bbbb</b>', '<b>cccc</b>']],
    [
      'keeps attributes when reopening',
      '<a href="u">aa bb</a>',
      20,
      ['<a href="u">aa</a>', '<a href="u">bb</a>'],
    ],
    ['never cuts an entity', '&amp;&amp;&amp;', 12, ['&amp;&amp;', '&amp;']],
    ['never cuts a surrogate pair', '😀😀😀', 4, ['😀😀', '😀']],
    ['keeps indentation in code', '<pre>a\n  b\n  c</pre>', 16, ['<pre>a\n  b</pre>', '<pre>  c</pre>']],
    ['drops the space at a cut', 'aaaa bbbb', 4, ['aaaa', 'bbbb']],
  ])('%s', (_name, html, limit, parts) => {
    expect(splitTelegramHtml(html, limit)).toEqual(parts);
  });

  it('gives parts within the limit, each well formed, that together hold all the text', () => {
    const markdown = fc.array(
      fc.oneof(
        fc.constantFrom(
          '**bold words here**',
          '*it*',
          '`code <x>`',
          '[link](https://x.org/a)',
          '\n\n',
          '\n',
          ' & ',
        ),
        fc.string({ unit: fc.constantFrom(...'abc de<>&\n'.split('')), maxLength: 40 }),
      ),
      { maxLength: 60 },
    );
    fc.assert(
      fc.property(markdown, fc.integer({ min: 60, max: 400 }), (pieces, limit) => {
        const html = markdownToTelegramHtml(pieces.join(''));
        const parts = splitTelegramHtml(html, limit);
        for (const part of parts) {
          expect(part.length).toBeLessThanOrEqual(limit);
          assertTelegramHtml(part);
        }
        const squash = (s: string) => s.replace(/\s+/g, '');
        expect(squash(parts.map(htmlToPlain).join(''))).toBe(squash(htmlToPlain(html)));
      }),
      { numRuns: 300 },
    );
  });

  it('cuts a long reply into parts of at most 4096 characters', () => {
    const html = markdownToTelegramHtml(
      Array.from({ length: 400 }, (_, i) => `**${i}** ${'x'.repeat(40)}`).join('\n\n'),
    );
    const parts = splitTelegramHtml(html);
    expect(parts.length).toBeGreaterThan(4);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(MESSAGE_LIMIT);
  });
});

describe('button data', () => {
  const id = '4e11c99a-7a36-4961-be4b-0b971bf174ac';
  it.each([
    [{ kind: 'decide', requestId: id, decision: 'once' } as const, `p:o:${id}`],
    [{ kind: 'decide', requestId: id, decision: 'session' } as const, `p:s:${id}`],
    [{ kind: 'decide', requestId: id, decision: 'deny' } as const, `p:d:${id}`],
    [{ kind: 'output', ref: id } as const, `o:${id}`],
  ])('%o is %s, within 64 bytes, and reads back', (action, data) => {
    expect(encodeButton(action)).toBe(data);
    expect(Buffer.byteLength(data)).toBeLessThanOrEqual(CALLBACK_DATA_LIMIT);
    expect(decodeButton(data)).toEqual(action);
  });

  it.each([undefined, '', 'x', 'p:x:abc', 'p:o:', 'o:', 'p:o:a b', `o:${'a'.repeat(57)}`])(
    'ignores %o',
    (data) => {
      expect(decodeButton(data)).toBeUndefined();
    },
  );

  it('refuses an id that would not fit or is not opaque', () => {
    expect(() => encodeButton({ kind: 'output', ref: 'a'.repeat(57) })).toThrow(/cannot travel/);
    expect(() => encodeButton({ kind: 'output', ref: '{"cmd":"rm"}' })).toThrow(/cannot travel/);
  });
});

const prompt = (args: string, score = 3): PermissionPrompt => ({
  requestId: '4e11c99a-7a36-4961-be4b-0b971bf174ac',
  tool: 'shell',
  args,
  score,
  level: score >= 3 ? 'destructive' : 'moderate',
  layer: 'classifier',
  rationale: 'rm deletes files',
});

describe('permission prompts', () => {
  it('show the tool, the exact full arguments (escaped), danger, layer and rationale, with three buttons', () => {
    const plan = promptPlan(prompt('rm "<notes>.txt" && echo ok'));
    expect(plan.kind).toBe('message');
    if (plan.kind !== 'message') return;
    expect(plan.html).toBe(
      [
        '🔐 <b>Permission needed</b>: <code>shell</code>',
        '<pre>rm "&lt;notes&gt;.txt" &amp;&amp; echo ok</pre>',
        'Danger: 3 (destructive) · layer: classifier',
        'Why: rm deletes files',
        '<i>No session grant covers a destructive call: Session runs it once.</i>',
      ].join('\n'),
    );
    expect(htmlToPlain(plan.html)).toContain('rm "<notes>.txt" && echo ok');
    const buttons = plan.keyboard.inline_keyboard.flat();
    expect(buttons.map((b) => b.text)).toEqual(['Once', 'Session', 'Deny']);
    expect(buttons.map((b) => ('callback_data' in b ? b.callback_data : ''))).toEqual([
      'p:o:4e11c99a-7a36-4961-be4b-0b971bf174ac',
      'p:s:4e11c99a-7a36-4961-be4b-0b971bf174ac',
      'p:d:4e11c99a-7a36-4961-be4b-0b971bf174ac',
    ]);
    const moderate = promptPlan(prompt('touch a', 2));
    expect(moderate.kind === 'message' && moderate.html).not.toContain('No session grant');
  });

  it('send a command too long for a message as a file carrying the buttons; the fallback can only deny', () => {
    const long = `echo ${'x'.repeat(5000)} && rm -rf build`;
    const plan = promptPlan(prompt(long));
    expect(plan.kind).toBe('document');
    if (plan.kind !== 'document') return;
    expect(plan.content).toBe(long);
    expect(plan.filename).toBe('shell-arguments.txt');
    expect(plan.caption.length).toBeLessThanOrEqual(CAPTION_LIMIT);
    expect(plan.caption).toContain(`${long.length.toLocaleString('en-US')} characters`);
    expect(plan.caption).toContain('in this file, in full');
    expect(plan.caption).not.toContain('xxxx');
    expect(plan.keyboard.inline_keyboard.flat().map((b) => b.text)).toEqual(['Once', 'Session', 'Deny']);
    expect(plan.fallback.keyboard.inline_keyboard.flat().map((b) => b.text)).toEqual(['Deny']);
    expect(plan.fallback.html).toContain('can only be denied');
    expect(plan.fallback.html.length).toBeLessThanOrEqual(MESSAGE_LIMIT);
    expect(htmlToPlain(plan.fallback.html)).not.toContain('rm -rf build');
  });

  it.each([
    ['once', '4242', '✅ <b>Allowed once</b> by you'],
    ['session', '4242', '✅ <b>Allowed for this session</b> by you'],
    ['deny', '4242', '⛔ <b>Denied</b> by you'],
    ['timeout', 'steward', '⌛ <b>Not answered in time</b>: not run'],
    ['deny', '<x>', '⛔ <b>Denied</b> by &lt;x&gt;'],
  ])('settled as %s by %s', (decision, by, line) => {
    expect(settledLine(decision, by, '4242')).toBe(line);
  });
});

describe('payloads of the calls the emulator cannot answer', () => {
  it('setMyCommands registers the commands for private chats', () => {
    expect(commandsPayload()).toEqual({ commands: [...BOT_COMMANDS], scope: { type: 'all_private_chats' } });
    expect(BOT_COMMANDS.map((c) => c.command)).toEqual([
      'start',
      'help',
      'new',
      'cost',
      'status',
      'budget',
      'grants',
      'revoke',
      'tools',
      'output',
      'research',
    ]);
    for (const c of BOT_COMMANDS) {
      expect(c.command).toMatch(/^[a-z0-9_]{1,32}$/);
      expect(c.description.length).toBeGreaterThanOrEqual(3);
      expect(c.description.length).toBeLessThanOrEqual(256);
    }
  });

  it('sendChatAction says typing', () => {
    expect(typingPayload(4242)).toEqual({ chat_id: 4242, action: 'typing' });
  });

  it('sendDocument carries the bytes, the file name, an HTML caption and the buttons', () => {
    const plan = promptPlan(prompt(`echo ${'y'.repeat(5000)}`));
    if (plan.kind !== 'document') throw new Error('expected a document');
    const payload = documentPayload(4242, plan);
    expect(payload.chat_id).toBe(4242);
    expect(payload.caption).toBe(plan.caption);
    expect(payload.parse_mode).toBe('HTML');
    expect(payload.reply_markup).toEqual(plan.keyboard);
    const file = payload.document as unknown as { filename: string; fileData: Uint8Array };
    expect(file.filename).toBe('shell-arguments.txt');
    expect(Buffer.from(file.fileData).toString('utf8')).toBe(plan.content);
    expect(documentPayload(1, { filename: 'a.txt', content: 'x' })).not.toHaveProperty('caption');
  });

  it('a stored output goes as a named file, and says when it was cut', () => {
    const spec = outputDocument({
      ref: '66b062f3-e9f6-4236-8c44-8761327d4335',
      tool: 'shell',
      bytes: 3 * 1024 * 1024,
      lines: 200_003,
      content: Buffer.from('1\n2\n'),
      truncated: true,
    });
    expect(spec.filename).toBe('shell-output-66b062f3.txt');
    expect(spec.caption).toBe('shell output, 200,003 lines, 3.0 MB (only the first 4 B)');
  });
});

describe('chat lines', () => {
  it('a stored output shows its size, ref, the command and a button', () => {
    const ref = '66b062f3-e9f6-4236-8c44-8761327d4335';
    const view = offloadedView({ ref, tool: 'shell', bytes: 1_288_896, lines: 200_003 });
    expect(htmlToPlain(view.html)).toBe(
      `📦 shell output stored: 1.2 MB, 200,003 lines\nref ${ref} · the whole of it: /output ${ref}`,
    );
    expect(view.keyboard).toEqual({
      inline_keyboard: [[{ text: 'Get the whole output', callback_data: `o:${ref}` }]],
    });
  });

  it.each([
    [[], '⚙️ '],
    [[{ callId: 'a', tool: 'shell', args: '{"command":"ls  -la"}', state: 'running' }], '⚙️ shell … ls -la'],
    [
      [
        { callId: 'a', tool: 'shell', args: '{}', state: 'ok' },
        { callId: 'b', tool: 'calculate', args: '{"expression":"1+1"}', state: 'failed' },
      ],
      '⚙️ shell ✓ · calculate ✗',
    ],
    [
      Array.from({ length: 8 }, (_, i) => ({ callId: String(i), tool: `t${i}`, args: '{}', state: 'ok' })),
      '⚙️ +2 · t2 ✓ · t3 ✓ · t4 ✓ · t5 ✓ · t6 ✓ · t7 ✓',
    ],
  ] as const)('status line %#', (activity, line) => {
    expect(statusLine(activity.map((a) => ({ ...a }) as ToolActivity))).toBe(line);
  });

  it.each([
    ['hello', { text: 'hello' }],
    ['/cost', { command: 'cost', text: '/cost' }],
    ['/Cost@steward_bot  today', { command: 'cost', text: '/cost  today' }],
    ['/output abc', { command: 'output', text: '/output abc' }],
    ['/a-b', { text: '/a-b' }],
  ])('normalizes %s', (text, expected) => {
    expect(normalizeCommand(text)).toEqual(expected);
  });

  it('escapes the three characters Telegram reads', () => {
    expect(escapeHtml('<a href="x">&</a>')).toBe('&lt;a href="x"&gt;&amp;&lt;/a&gt;');
  });
});

describe('errors that end the channel', () => {
  const apiError = (code: number, description: string) =>
    new GrammyError(
      `Call to 'getUpdates' failed! (${code}: ${description})`,
      { ok: false, error_code: code, description },
      'getUpdates',
      {},
    );

  it('409 from another poller is one clear line', () => {
    const error = fatalTelegramError(
      apiError(
        409,
        'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
      ),
    );
    expect(error).toBeInstanceOf(TelegramConflictError);
    expect(error?.message).toMatch(/^telegram: another process is polling this bot token \(409 Conflict\)/);
    expect(error?.message).toContain('STEWARD_TELEGRAM_TOKEN');
    expect(error?.message).not.toContain('\n');
  });

  it('409 from a webhook says to remove it', () => {
    const error = fatalTelegramError(
      apiError(409, "Conflict: can't use getUpdates method while webhook is active"),
    );
    expect(error).toBeInstanceOf(TelegramConflictError);
    expect(error?.message).toContain('deleteWebhook');
  });

  it('401 is a bad token; 429, 5xx and network failures are retried', () => {
    expect(fatalTelegramError(apiError(401, 'Unauthorized'))).toBeInstanceOf(TelegramAuthError);
    expect(fatalTelegramError(apiError(429, 'Too Many Requests'))).toBeUndefined();
    expect(fatalTelegramError(apiError(502, 'Bad Gateway'))).toBeUndefined();
    expect(
      fatalTelegramError(new HttpError('Network request failed', new Error('ECONNRESET'))),
    ).toBeUndefined();
  });
});
