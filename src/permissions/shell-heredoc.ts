// Here-documents: `<<WORD` is recorded where it appears; its body is read when the line ends.
// The body is data for the command, unless that command is a shell (rules-interpreters.ts).
import { type Context, HEREDOC_MARK, type HereDoc, opaque } from './shell-marks.ts';

/** `<<[-]WORD`: records the here-document; its body is read at the next newline. */
export function heredocStart(s: string, i: number, ctx: Context): { text: string; end: number } {
  let k = i + 2;
  const strip = s[k] === '-';
  if (strip) k++;
  while (s[k] === ' ' || s[k] === '\t') k++;
  const begin = k;
  while (k < s.length && !/[\s;&|<>()]/.test(s[k] as string)) {
    if (s[k] === "'" || s[k] === '"') {
      const close = s.indexOf(s[k] as string, k + 1);
      k = close < 0 ? s.length : close + 1;
    } else k += s[k] === '\\' ? 2 : 1;
  }
  const word = s.slice(begin, k);
  if (word === '') return { text: '<<', end: k };
  const quoted = /['"\\]/.test(word);
  const delimiter = word.replace(/['"\\]/g, '');
  ctx.pending.push(ctx.heredocs.length);
  ctx.heredocs.push({ delimiter, quoted, strip, body: '' });
  return { text: `<< ${HEREDOC_MARK}${ctx.heredocs.length - 1} `, end: k };
}

/** Reads the bodies of the here-documents opened on the line that just ended. */
export function readHeredocBodies(s: string, start: number, ctx: Context): number {
  let pos = start;
  for (const index of ctx.pending) {
    const doc = ctx.heredocs[index] as HereDoc;
    const lines: string[] = [];
    while (pos < s.length) {
      const eol = s.indexOf('\n', pos);
      const line = s.slice(pos, eol < 0 ? s.length : eol);
      pos = eol < 0 ? s.length : eol + 1;
      if ((doc.strip ? line.replace(/^\t+/, '') : line) === doc.delimiter) break;
      lines.push(line);
    }
    doc.body = lines.join('\n');
    if (!doc.quoted && /\$\(|`/.test(doc.body)) opaque(ctx, 'command substitution in a here-document');
  }
  ctx.pending = [];
  return pos;
}
