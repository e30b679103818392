// What kind of document a file is, from its name, the type the sender's client claimed and its
// first bytes. Pure, table-tested. The content decides in the end: a PDF is a PDF by its magic
// bytes, and a ".txt" full of binary is refused, whatever the name says.

export type DocumentVerdict = { type: 'text' } | { type: 'pdf' } | { type: 'unsupported'; why: string };

/** Extensions of files read as text: prose, data, logs, configuration and source code. */
const TEXT_EXTENSIONS = new Set(
  (
    'txt text md markdown rst org adoc tex csv tsv json jsonl ndjson json5 log out err yaml yml toml ini cfg conf ' +
    'properties env xml html htm xhtml svg css scss less js mjs cjs ts mts cts tsx jsx py pyi rb go rs java kt kts ' +
    'scala groovy gradle c h cc cpp cxx hpp hh cs fs swift m mm php pl pm lua r jl dart ex exs erl hs ml clj ' +
    'sh bash zsh fish ps1 bat cmd sql graphql proto tf hcl nix diff patch srt vtt ics vcf eml mbox dockerfile makefile'
  ).split(' '),
);

/** File names without an extension that are text by convention. */
const TEXT_NAMES = new Set([
  'dockerfile',
  'makefile',
  'readme',
  'license',
  'changelog',
  'gemfile',
  'procfile',
]);

const TEXT_MIMES = new Set([
  'application/json',
  'application/ld+json',
  'application/x-ndjson',
  'application/xml',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/javascript',
  'application/x-javascript',
  'application/typescript',
  'application/x-sh',
  'application/x-shellscript',
  'application/sql',
  'application/csv',
  'application/x-subrip',
  'application/x-httpd-php',
  'application/x-python',
  'message/rfc822',
]);

/** Types a client sends when it does not know: the content decides. */
const UNKNOWN_MIMES = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/unknown']);

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-

export const SUPPORTED_DOCUMENTS = 'text files (txt, md, csv, json, logs, source code) and PDFs';

export function extensionOf(name: string): string {
  const base = name.split(/[\\/]/).pop()?.toLowerCase() ?? '';
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot + 1);
}

function textByName(name: string): boolean {
  const base = name.split(/[\\/]/).pop()?.toLowerCase() ?? '';
  return TEXT_EXTENSIONS.has(extensionOf(base)) || TEXT_NAMES.has(base);
}

function textByMime(mime: string): boolean {
  return mime.startsWith('text/') || TEXT_MIMES.has(mime) || /\+(json|xml)$/.test(mime);
}

export function isPdf(head: Uint8Array): boolean {
  // The header may follow a little junk; readers accept it within the first kilobyte.
  const limit = Math.min(head.length - PDF_MAGIC.length, 1024);
  for (let at = 0; at <= limit; at++) if (PDF_MAGIC.every((b, i) => head[at + i] === b)) return true;
  return false;
}

/**
 * Whether bytes read as UTF-8 text: no NUL, valid UTF-8 (a sequence cut at the end of `head`
 * allowed), and almost no control characters besides tab, line breaks, form feed and escape.
 */
export function looksLikeText(head: Uint8Array): boolean {
  if (head.length === 0) return true;
  let controls = 0;
  for (const byte of head) {
    if (byte === 0) return false;
    if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c && byte !== 0x1b)
      controls++;
  }
  if (controls / head.length > 0.01) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** The verdict for a document: `head` is its first bytes (8 KiB is plenty), or all of it. */
export function documentType(name: string, mime: string | undefined, head: Uint8Array): DocumentVerdict {
  const type = (mime ?? '').toLowerCase().split(';')[0]?.trim() ?? '';
  if (isPdf(head)) return { type: 'pdf' };
  if (type === 'application/pdf' || extensionOf(name) === 'pdf')
    return { type: 'unsupported', why: 'it is called a PDF but its content is not one' };
  const claimedText = textByName(name) || textByMime(type);
  if (!claimedText && !UNKNOWN_MIMES.has(type)) return { type: 'unsupported', why: `its type is ${type}` };
  if (looksLikeText(head)) return { type: 'text' };
  return {
    type: 'unsupported',
    why: claimedText ? 'its content is binary, not UTF-8 text' : 'its content is not text',
  };
}
