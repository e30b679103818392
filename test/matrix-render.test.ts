// The Matrix adapter's pure parts: Markdown to sanitized HTML, splitting, reactions and typed
// answers to decisions, command prefixes, prompt text, and waiting out rate limits.
import { describe, expect, it } from 'vitest';
import {
  decisionFromReaction,
  decisionFromText,
  outputCommand,
  stripReplyFallback,
  translateCommand,
} from '../adapters/matrix/commands.ts';
import { decidedContent, outcomeLine, promptText } from '../adapters/matrix/prompt-text.ts';
import { rateLimitWait, withRateLimit } from '../adapters/matrix/rate-limit.ts';
import {
  editContent,
  renderMarkdown,
  sanitizeHtml,
  splitMessage,
  splitText,
  textContent,
} from '../adapters/matrix/render.ts';

describe('Markdown to Matrix HTML', () => {
  it.each([
    ['**bold** and _em_', '<p><strong>bold</strong> and <em>em</em></p>'],
    ['`a < b`', '<p><code>a &lt; b</code></p>'],
    [
      '```js\nlet x = "<y>";\n```',
      '<pre><code class="language-js">let x = &quot;&lt;y&gt;&quot;;\n</code></pre>',
    ],
    ['[site](https://example.org)', '<p><a href="https://example.org">site</a></p>'],
    ['line one\nline two', '<p>line one<br>line two</p>'],
    ['- [x] done\n- [ ] todo', '<ul>\n<li>☑ done</li>\n<li>☐ todo</li>\n</ul>'],
    ['~~gone~~', '<p><del>gone</del></p>'],
  ])('%j', (markdown, html) => {
    expect(renderMarkdown(markdown)).toBe(html);
  });

  it.each([
    ['<script>alert(1)</script>', 'script'],
    ['<img src=x onerror=alert(1)>', 'onerror'],
    ['hi <b onclick="x()">there</b>', 'onclick'],
    ['[click](javascript:alert(1))', 'javascript:'],
    ['![pic](javascript:alert(1))', 'javascript:'],
    ['<a href="javascript:alert(1)">x</a>', '<a'],
    ['<iframe src="https://evil.example"></iframe>', '<iframe'],
  ])('raw HTML and unsafe links are inert: %j', (markdown, forbidden) => {
    const html = renderMarkdown(markdown);
    const tags = [...html.matchAll(/<([a-z][a-z0-9]*)([^>]*)>/g)].map((m) => m[0]);
    expect(tags.join(' ')).not.toContain(forbidden);
  });

  it('shows raw HTML as text', () => {
    expect(renderMarkdown('a <b>c</b>')).toBe('<p>a &lt;b&gt;c&lt;/b&gt;</p>');
  });

  it('sanitizeHtml keeps allowed tags and attributes only', () => {
    expect(
      sanitizeHtml('<p onclick="x">a</p><style>b</style><a href="https://x.org" target="_blank">c</a>'),
    ).toBe('<p>a</p>&lt;style&gt;b&lt;/style&gt;<a href="https://x.org">c</a>');
    expect(sanitizeHtml('<code class="language-js x" >a</code>')).toBe('<code>a</code>');
    expect(sanitizeHtml('<ol start="3"><li>x</li></ol>')).toBe('<ol start="3"><li>x</li></ol>');
  });

  it('textContent carries the Markdown as body and HTML as formatted_body; edits wrap it', () => {
    const content = textContent('**hi**');
    expect(content).toEqual({
      msgtype: 'm.text',
      body: '**hi**',
      format: 'org.matrix.custom.html',
      formatted_body: '<p><strong>hi</strong></p>',
    });
    expect(editContent('$e', content)).toEqual({
      msgtype: 'm.text',
      body: '* **hi**',
      'm.new_content': content,
      'm.relates_to': { rel_type: 'm.replace', event_id: '$e' },
    });
  });
});

describe('splitting long replies', () => {
  it('keeps short text whole', () => {
    expect(splitText('hello', 100)).toEqual(['hello']);
  });

  it('cuts at paragraph breaks first, then lines, then spaces, never over the limit', () => {
    const text = `${'a'.repeat(60)}\n\n${'b'.repeat(60)}\n${'c'.repeat(30)} ${'d'.repeat(30)}`;
    const parts = splitText(text, 80);
    expect(parts[0]).toBe('a'.repeat(60));
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(80);
    expect(parts.join(' ').replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
  });

  it('hard-cuts a text without breaks', () => {
    const parts = splitText('x'.repeat(250), 100);
    expect(parts.join('')).toBe('x'.repeat(250));
    expect(parts.every((p) => p.length <= 100)).toBe(true);
  });

  it('closes a code block at a cut and opens it again with its language', () => {
    const code = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
    const parts = splitText(`Here:\n\`\`\`python\n${code}\n\`\`\`\nDone.`, 120);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) {
      const fences = part.split('\n').filter((l) => l.startsWith('```')).length;
      expect(fences % 2, part).toBe(0);
    }
    expect(parts[1]?.startsWith('```python\n')).toBe(true);
    const rendered = parts.map(renderMarkdown);
    expect(rendered.slice(1, -1).every((h) => h.startsWith('<pre><code class="language-python">'))).toBe(
      true,
    );
  });

  it('splitMessage keeps every edit of a part inside the event size limit', () => {
    const text = '<&"'.repeat(20_000);
    const parts = splitMessage(text);
    expect(parts.join('')).toBe(text);
    for (const p of parts) {
      expect(Buffer.byteLength(JSON.stringify(editContent('$x', textContent(p))))).toBeLessThan(65_000);
    }
  });
});

describe('decisions and commands', () => {
  it.each([
    ['✅', 'once'],
    ['✅️', 'once'],
    ['🔁', 'session'],
    ['❌', 'deny'],
    ['👍', undefined],
    ['✔️', undefined],
  ])('reaction %s → %s', (key, decision) => {
    expect(decisionFromReaction(key)).toBe(decision);
  });

  it.each([
    ['once', 'once'],
    [' Session ', 'session'],
    ['DENY.', 'deny'],
    ['!deny', 'deny'],
    ['/once', 'once'],
    ['deny it', undefined],
    ['no', undefined],
  ])('typed %j → %s', (text, decision) => {
    expect(decisionFromText(text)).toBe(decision);
  });

  it.each([
    ['!new', '/new'],
    ['!research why is the sky blue', '/research why is the sky blue'],
    ['!COST', '/cost'],
    ['!help', '/help'],
    ['!output 1234', '/output 1234'],
    ['/new', '/new'],
    ['!important: read this', '!important: read this'],
    ['!newer', '!newer'],
    ['hello !new', 'hello !new'],
  ])('command %j → %j', (text, translated) => {
    expect(translateCommand(text)).toBe(translated);
  });

  it('reads /output refs', () => {
    expect(outputCommand('/output abc')).toBe('abc');
    expect(outputCommand('/output')).toBe('');
    expect(outputCommand('/outputs')).toBeUndefined();
    expect(outputCommand('hello')).toBeUndefined();
  });

  it('strips the quoted original from a reply', () => {
    expect(stripReplyFallback('> <@bot:x> 🔐 Permission needed\n> more\n\ndeny')).toBe('deny');
    expect(stripReplyFallback('plain')).toBe('plain');
  });
});

describe('prompt text', () => {
  const prompt = {
    requestId: 'r-1',
    tool: 'shell',
    args: '{"command":"rm -rf ```build```"}',
    score: 3,
    level: 'destructive',
    layer: 'classifier' as const,
    rationale: 'rm deletes files',
  };

  it('shows the tool, the exact arguments, the danger and the reason', () => {
    const text = promptText(prompt);
    expect(text.body).toContain(prompt.args);
    expect(text.body).toContain('Danger: 3 (destructive), layer: classifier');
    expect(text.body).toContain('Why: rm deletes files');
    // The fence is longer than any backtick run in the arguments.
    expect(text.body).toContain('````json');
    expect(text.html).toContain('{&quot;command&quot;:&quot;rm -rf ```build```&quot;}');
  });

  it('labels JSON arguments as JSON and a command line as plain text', () => {
    expect(promptText({ ...prompt, args: 'rm -rf build' }).body).toContain(
      'Arguments:\n```\nrm -rf build\n```',
    );
    expect(promptText({ ...prompt, args: 'rm -rf build' }).html).toContain(
      '<pre><code>rm -rf build</code></pre>',
    );
    expect(promptText({ ...prompt, args: '{"path":"a"}' }).body).toContain('```json\n{"path":"a"}\n```');
  });

  it('names the file when the arguments are too long to inline', () => {
    expect(promptText(prompt, 'shell-arguments.json').body).toContain('in the file shell-arguments.json');
  });

  it('after the decision shows the outcome instead of how to answer', () => {
    const done = decidedContent(promptText(prompt), outcomeLine('once', '@me:x'));
    expect(done.body).toContain('✅ Approved once by @me:x');
    expect(done.body).not.toContain('React');
    expect(outcomeLine('timeout', 'steward')).toBe('⌛ No answer in time: not run');
  });
});

describe('M_LIMIT_EXCEEDED', () => {
  const limited = (ms?: number) =>
    Object.assign(new Error('M_LIMIT_EXCEEDED'), {
      errcode: 'M_LIMIT_EXCEEDED',
      statusCode: 429,
      retryAfterMs: ms,
    });

  it('reads retry_after_ms, with a default and a ceiling', () => {
    expect(rateLimitWait(limited(1234))).toBe(1234);
    expect(rateLimitWait(limited())).toBe(1000);
    expect(rateLimitWait(limited(10_000_000))).toBe(60_000);
    expect(rateLimitWait({ body: { errcode: 'M_LIMIT_EXCEEDED', retry_after_ms: 5 } })).toBe(5);
    expect(rateLimitWait(new Error('boom'))).toBeUndefined();
  });

  it('waits as told and tries again; other errors pass through', async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await withRateLimit(
      async () => {
        calls++;
        if (calls < 3) throw limited(200 * calls);
        return 'sent';
      },
      { sleep: async (ms) => void waits.push(ms) },
    );
    expect(result).toBe('sent');
    expect(waits).toEqual([200, 400]);
    await expect(
      withRateLimit(
        async () => {
          throw new Error('M_FORBIDDEN');
        },
        { sleep: async () => {} },
      ),
    ).rejects.toThrow('M_FORBIDDEN');
    await expect(
      withRateLimit(
        async () => {
          throw limited(1);
        },
        { sleep: async () => {}, attempts: 2 },
      ),
    ).rejects.toThrow('M_LIMIT_EXCEEDED');
  });
});
