// Telegram takes at most 4096 characters a message. A long reply is cut into parts that each stand
// alone: a tag open at a cut is closed at the end of one part and opened again (with its
// attributes) at the start of the next; entities and surrogate pairs are never cut in half.
// Lengths are counted on the HTML itself, which is never shorter than what Telegram counts.
import { htmlToPlain } from './html.ts';

export const MESSAGE_LIMIT = 4096;

interface Unit {
  text: string;
  open?: string;
  close?: string;
}

const UNIT =
  /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)\b[^>]*>|&(?:#\d+|#x[0-9a-fA-F]+|[a-zA-Z]+);|[\uD800-\uDBFF][\uDC00-\uDFFF]|[\s\S]/g;

function unitsOf(html: string): Unit[] {
  const units: Unit[] = [];
  for (const m of html.matchAll(UNIT)) {
    const [text, slash, name] = m;
    if (name === undefined) units.push({ text });
    else units.push(slash ? { text, close: name.toLowerCase() } : { text, open: name.toLowerCase() });
  }
  return units;
}

interface OpenTag {
  name: string;
  raw: string;
}

const closer = (name: string) => `</${name}>`;

function step(stack: OpenTag[], unit: Unit): void {
  if (unit.open) stack.push({ name: unit.open, raw: unit.text });
  else if (unit.close) {
    const at = stack.map((t) => t.name).lastIndexOf(unit.close);
    if (at !== -1) stack.splice(at, 1);
  }
}

const inCode = (stack: OpenTag[]) => stack.some((t) => t.name === 'pre' || t.name === 'code');
const isSpace = (unit: Unit | undefined) =>
  unit !== undefined && !unit.open && !unit.close && /^\s$/.test(unit.text);

const closers = (stack: OpenTag[]) =>
  stack
    .map((t) => closer(t.name))
    .reverse()
    .join('');

/** Cuts well-formed Telegram HTML into parts of at most `limit` characters, preferring line ends. */
export function splitTelegramHtml(html: string, limit = MESSAGE_LIMIT): string[] {
  const units = unitsOf(html);
  const parts: string[] = [];
  let stack: OpenTag[] = [];
  let i = 0;
  while (i < units.length) {
    // Whitespace at the start of a continuation is dropped (Telegram would trim it); in code only
    // the line break the cut fell on, so indentation stays.
    if (parts.length > 0) {
      if (inCode(stack)) {
        if (units[i]?.text === '\n') i++;
      } else while (i < units.length && isSpace(units[i])) i++;
    }
    if (i >= units.length) break;
    const prefix = stack.map((t) => t.raw).join('');
    const probe = stack.map((t) => ({ ...t }));
    let length = prefix.length;
    let closeLength = closers(probe).length;
    let end = i;
    let lastNewline = -1;
    let lastSpace = -1;
    while (end < units.length) {
      const unit = units[end] as Unit;
      const nextClose = unit.open
        ? closeLength + closer(unit.open).length
        : unit.close && probe.some((t) => t.name === unit.close)
          ? closeLength - closer(unit.close).length
          : closeLength;
      if (length + unit.text.length + nextClose > limit) break;
      step(probe, unit);
      length += unit.text.length;
      closeLength = nextClose;
      end++;
      if (unit.text === '\n') lastNewline = end;
      else if (unit.text === ' ') lastSpace = end;
    }
    let cut = end;
    if (end < units.length) {
      const half = i + (end - i) / 2;
      const next = units[end]?.text;
      if (next === '\n') cut = end;
      else if (lastNewline > half) cut = lastNewline;
      else if (next === ' ') cut = end;
      else if (lastSpace > half) cut = lastSpace;
      // Never end a part on tags that open nothing yet.
      while (cut > i + 1 && units[cut - 1]?.open) cut--;
      if (cut <= i) cut = i + 1;
    }
    const body = units.slice(i, cut);
    const after = stack.map((t) => ({ ...t }));
    for (const unit of body) step(after, unit);
    // Whitespace before the cut goes too (in code, only the line break).
    if (inCode(after)) {
      if (body.at(-1)?.text === '\n') body.pop();
    } else while (isSpace(body.at(-1))) body.pop();
    const part = (prefix + body.map((u) => u.text).join('') + closers(after)).trimEnd();
    if (htmlToPlain(part).trim() !== '') parts.push(part);
    stack = after;
    i = cut;
  }
  return parts;
}
