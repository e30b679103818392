import { parseDocument } from 'yaml';

export type FrontMatter =
  | {
      ok: true;
      data: unknown;
      /** The body, leading blank lines and trailing whitespace removed. */
      body: string;
      /** The file line (1-based) of the body's first line. */
      bodyLine: number;
    }
  | { ok: false; line: number; what: string; fix: string };

const SKELETON = '"---", "name: <folder name>", "description: … Use when …", "---"';

/** Splits a SKILL.md into its YAML front matter (between two `---` lines) and its body. */
export function splitFrontMatter(text: string): FrontMatter {
  const lines = text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .split('\n');
  if (lines[0]?.trimEnd() !== '---') {
    return {
      ok: false,
      line: 1,
      what: 'no front matter (the file must start with a "---" line)',
      fix: `begin the file with the lines ${SKELETON}`,
    };
  }
  const end = lines.findIndex((l, i) => i > 0 && l.trimEnd() === '---');
  if (end === -1) {
    return {
      ok: false,
      line: 1,
      what: 'front matter is never closed',
      fix: 'add a "---" line after the description, before the body',
    };
  }
  const doc = parseDocument(lines.slice(1, end).join('\n'));
  const error = doc.errors[0];
  if (error) {
    const reason = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    return {
      ok: false,
      line: (error.linePos?.[0].line ?? 1) + 1,
      what: `front matter is not valid YAML (${reason})`,
      fix: 'fix the YAML; quote a value that contains ": " or starts with a special character',
    };
  }
  let first = end + 1;
  while (first < lines.length && (lines[first] ?? '').trim() === '') first++;
  return {
    ok: true,
    data: doc.toJS(),
    body: lines.slice(first).join('\n').trimEnd(),
    bodyLine: first + 1,
  };
}
