// Markdown to the HTML subset Matrix clients show, and long text cut into messages that fit in an
// event. Pure functions, table-tested in test/matrix-render.test.ts.
import { Marked, type Tokens } from 'marked';

export const HTML_FORMAT = 'org.matrix.custom.html';

/** Any message content: a msgtype and a plain body, and whatever else the type carries. */
export type MessageContent = { msgtype: string; body: string; [key: string]: unknown };

export type TextContent = {
  msgtype: 'm.text' | 'm.notice';
  body: string;
  format?: typeof HTML_FORMAT;
  formatted_body?: string;
};

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const SAFE_URL = /^(https?:|mailto:|matrix:)/i;

const markdown = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    // Raw HTML in the text is shown as text, never interpreted.
    html: ({ text }: Tokens.HTML | Tokens.Tag) => escapeHtml(text),
    link(token: Tokens.Link) {
      const label = this.parser.parseInline(token.tokens);
      return SAFE_URL.test(token.href) ? `<a href="${escapeHtml(token.href)}">${label}</a>` : label;
    },
    // Matrix images must be mxc:// uploads; a remote image becomes a link to it.
    image: ({ href, text }: Tokens.Image) =>
      SAFE_URL.test(href)
        ? `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`
        : escapeHtml(text),
    checkbox: ({ checked }: Tokens.Checkbox) => (checked ? '☑ ' : '☐ '),
  },
});

/** The tags (and, per tag, the attributes) kept in `formatted_body`; anything else is escaped. */
const ALLOWED: Record<string, readonly string[]> = {
  a: ['href'],
  p: [],
  br: [],
  hr: [],
  h1: [],
  h2: [],
  h3: [],
  h4: [],
  h5: [],
  h6: [],
  blockquote: [],
  ul: [],
  ol: ['start'],
  li: [],
  pre: [],
  code: ['class'],
  em: [],
  strong: [],
  del: [],
  b: [],
  i: [],
  s: [],
  u: [],
  sub: [],
  sup: [],
  span: [],
  table: [],
  thead: [],
  tbody: [],
  tr: [],
  th: [],
  td: [],
  details: [],
  summary: [],
};

const ATTRIBUTE_VALUE: Record<string, RegExp> = {
  href: SAFE_URL,
  class: /^language-[\w+#.-]+$/,
  start: /^\d{1,9}$/,
};

/** A second line of defence behind the renderer: only allowed tags and attributes survive. */
export function sanitizeHtml(html: string): string {
  return html.replace(
    /<(\/?)([a-zA-Z][a-zA-Z0-9]*)([^<>]*)>/g,
    (whole, close: string, name: string, rest) => {
      const tag = name.toLowerCase();
      const allowed = ALLOWED[tag];
      if (!allowed) return escapeHtml(whole);
      if (close) return `</${tag}>`;
      const attributes: string[] = [];
      for (const [, key = '', value = ''] of String(rest).matchAll(/\s([a-zA-Z-]+)="([^"]*)"/g)) {
        const attribute = key.toLowerCase();
        const pattern = ATTRIBUTE_VALUE[attribute];
        if (allowed.includes(attribute) && pattern?.test(value)) attributes.push(` ${attribute}="${value}"`);
      }
      return `<${tag}${attributes.join('')}${/\/\s*$/.test(String(rest)) ? ' /' : ''}>`;
    },
  );
}

/** Markdown as sanitized HTML for `formatted_body`. */
export function renderMarkdown(text: string): string {
  return sanitizeHtml((markdown.parse(text, { async: false }) as string).trim());
}

/** A message: the Markdown as `body` (what plain clients show) and its HTML as `formatted_body`. */
export function textContent(text: string, msgtype: TextContent['msgtype'] = 'm.text'): TextContent {
  return { msgtype, body: text, format: HTML_FORMAT, formatted_body: renderMarkdown(text) };
}

/** An edit (m.replace) of `eventId`; clients without edits show the starred fallback. */
export function editContent(eventId: string, content: MessageContent | TextContent): Record<string, unknown> {
  return {
    msgtype: content.msgtype,
    body: `* ${content.body}`,
    'm.new_content': content,
    'm.relates_to': { rel_type: 'm.replace', event_id: eventId },
  };
}

const FENCE = /^\s*(`{3,}|~{3,})(.*)$/;

/**
 * Cuts text into parts of at most about `maxChars`: at a paragraph break if there is one, else a
 * line break, else a space. A code block cut in two is closed at the end of one part and opened
 * again (same fence, same language) at the start of the next.
 */
export function splitText(text: string, maxChars: number): string[] {
  const parts: string[] = [];
  let rest = text;
  let reopen = '';
  while (rest.length > 0) {
    const budget = Math.max(1, maxChars - reopen.length - 8);
    let piece: string;
    if (reopen.length + rest.length <= maxChars) piece = rest;
    else {
      const window = rest.slice(0, budget);
      const at = [window.lastIndexOf('\n\n'), window.lastIndexOf('\n'), window.lastIndexOf(' ')].find(
        (i) => i > budget / 2,
      );
      piece = rest.slice(0, at ?? budget);
    }
    rest = rest.slice(piece.length).replace(/^\n+|^ /, '');
    let part = reopen + piece;
    const open = openFence(part);
    reopen = '';
    if (open && rest.length > 0) {
      part = `${part.replace(/\n+$/, '')}\n${open.marker}`;
      reopen = `${open.marker}${open.info}\n`;
    }
    parts.push(part.replace(/\s+$/, ''));
  }
  return parts.filter((p) => p.length > 0);
}

/** The code fence still open at the end of `text`, if any. */
function openFence(text: string): { marker: string; info: string } | undefined {
  let open: { marker: string; info: string } | undefined;
  for (const line of text.split('\n')) {
    const m = FENCE.exec(line);
    if (!m) continue;
    const marker = m[1] ?? '```';
    if (!open) open = { marker, info: (m[2] ?? '').trim() };
    else if (marker[0] === open.marker[0] && marker.length >= open.marker.length && !m[2]?.trim())
      open = undefined;
  }
  return open;
}

/** Largest event Synapse takes is 65,536 bytes of JSON; an edit carries the text twice plus HTML. */
const MAX_EDIT_BYTES = 60_000;
export const PART_CHARS = 12_000;

/** Splits a reply into messages that each fit in an event, even as an edit. */
export function splitMessage(text: string, maxChars = PART_CHARS): string[] {
  return splitText(text, maxChars).flatMap((part) =>
    maxChars > 500 && editBytes(part) > MAX_EDIT_BYTES
      ? splitMessage(part, Math.floor(maxChars / 2))
      : [part],
  );
}

function editBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(editContent('$x', textContent(text))));
}
