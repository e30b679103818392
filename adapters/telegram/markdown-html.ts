// Markdown (as models write it) to the small HTML dialect Telegram accepts: b, i, s, code, pre,
// a, blockquote. Every piece of text is escaped, raw HTML in the Markdown included, so nothing the
// model writes can become markup Telegram would reject or a link the owner did not see.
import { Marked, type RendererObject, type Tokens } from 'marked';
import { escapeAttribute, escapeHtml } from './html.ts';

/** Links keep their target only for these schemes; anything else shows as its text. */
const SAFE_HREF = /^(https?:\/\/|tg:\/\/|mailto:)/i;
const LANGUAGE = /^[A-Za-z0-9_+#.-]{1,30}$/;

function tableText(rows: string[][], align: Array<'center' | 'left' | 'right' | null>): string {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => [...(r[c] ?? '')].length))) ?? [];
  const pad = (text: string, c: number) => {
    const room = (widths[c] ?? 0) - [...text].length;
    if (align[c] === 'right') return ' '.repeat(room) + text;
    if (align[c] === 'center')
      return ' '.repeat(Math.floor(room / 2)) + text + ' '.repeat(Math.ceil(room / 2));
    return text + ' '.repeat(room);
  };
  const lines = rows.map((r) => r.map(pad).join(' | ').trimEnd());
  if (lines.length > 1) lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('-+-'));
  return lines.join('\n');
}

function createRenderer(): RendererObject<string, string> {
  let quoteDepth = 0;
  return {
    space: () => '',
    def: () => '',
    hr: () => '──────────\n\n',
    html: ({ text }) => escapeHtml(text),
    checkbox: () => '',
    br: () => '\n',
    code({ text, lang }) {
      const body = escapeHtml(text.replace(/\n$/, ''));
      const language = lang?.split(/\s/)[0] ?? '';
      return LANGUAGE.test(language)
        ? `<pre><code class="language-${language}">${body}</code></pre>\n\n`
        : `<pre>${body}</pre>\n\n`;
    },
    blockquote({ tokens }) {
      // Telegram refuses a quote inside a quote: the inner one is just its text.
      quoteDepth++;
      const inner = this.parser.parse(tokens).trim();
      quoteDepth--;
      if (inner === '') return '';
      return quoteDepth > 0 ? `${inner}\n\n` : `<blockquote>${inner}</blockquote>\n\n`;
    },
    heading({ tokens }) {
      return `<b>${this.parser.parseInline(tokens)}</b>\n\n`;
    },
    paragraph({ tokens }) {
      return `${this.parser.parseInline(tokens)}\n\n`;
    },
    list(token) {
      const start = typeof token.start === 'number' ? token.start : 1;
      const items = token.items.map((item: Tokens.ListItem, i: number) => {
        const marker = token.ordered ? `${start + i}. ` : '• ';
        const task = item.task ? (item.checked ? '☑ ' : '☐ ') : '';
        const body = item.tokens
          .filter((t) => t.type !== 'checkbox')
          .map((t) => this.parser.parse([t]).trim())
          .filter((part) => part !== '')
          .join('\n')
          .replace(/\n\n+/g, '\n');
        const indent = ' '.repeat(marker.length);
        return marker + task + body.replace(/\n/g, `\n${indent}`);
      });
      return `${items.join('\n')}\n\n`;
    },
    table(token) {
      const plain = (cell: Tokens.TableCell) =>
        this.parser.parseInline(cell.tokens, this.parser.textRenderer).replace(/\s+/g, ' ').trim();
      const rows = [token.header.map(plain), ...token.rows.map((row: Tokens.TableCell[]) => row.map(plain))];
      return `<pre>${escapeHtml(tableText(rows, token.align))}</pre>\n\n`;
    },
    strong({ tokens }) {
      return `<b>${this.parser.parseInline(tokens)}</b>`;
    },
    em({ tokens }) {
      return `<i>${this.parser.parseInline(tokens)}</i>`;
    },
    del({ tokens }) {
      return `<s>${this.parser.parseInline(tokens)}</s>`;
    },
    codespan({ text }) {
      return `<code>${escapeHtml(text)}</code>`;
    },
    link({ href, tokens }) {
      // Telegram allows no other entity inside a link: its text goes in plain.
      const text = escapeHtml(this.parser.parseInline(tokens, this.parser.textRenderer));
      return SAFE_HREF.test(href)
        ? `<a href="${escapeAttribute(href)}">${text || escapeHtml(href)}</a>`
        : text;
    },
    image({ href, text }) {
      const label = escapeHtml(text || 'image');
      return SAFE_HREF.test(href) ? `<a href="${escapeAttribute(href)}">${label}</a>` : label;
    },
    text(token) {
      if ('tokens' in token && token.tokens) return this.parser.parseInline(token.tokens);
      return escapeHtml(token.text);
    },
  };
}

/** Markdown to Telegram HTML; the result has balanced tags and no blank runs longer than one line. */
export function markdownToTelegramHtml(markdown: string): string {
  const marked = new Marked({ gfm: true, breaks: false, async: false, renderer: createRenderer() });
  const html = marked.parse(markdown.replace(/\r\n?/g, '\n'), { async: false });
  return html.replace(/\n{3,}/g, '\n\n').trim();
}
