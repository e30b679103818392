// The skeleton of a text, as the fence scans it: every letter a reader could take for one of the
// tag name's letters, in order, each with the original span it came from. The model receives the
// original with the spans of forged names replaced, never a skeleton.
//
// A reader may see a text in more than one way, so it is scanned in three:
//   raw      the characters as written (a name inside an HTML comment, inside `&...;` letters,
//            or spelled in tag characters, which read as the ASCII they mirror here only);
//   decoded  character references decoded, repeatedly (`&#117;ntrusted`, `&amp;lt;`);
//   rendered decoded, with HTML comments, CDATA markers and tags taken out (`untr<!-- -->usted`).
// In each, invisible characters are dropped, each code point reads as its prototype (reading.ts)
// and only the letters a-z and `<` are kept: whatever else is not a letter (spaces, `_`, `-`, line
// breaks, brackets of any other shape, digits, other scripts) cannot keep two letters of the name
// apart. A real `<` can: `<untrusted>\n</content>` is two tags, not the name.
import { createReader, readCodePoint } from './reading.ts';
import { ReferenceDecoder, type Units } from './references.ts';

/** The tag name's letters: `untrusted_content` with any separator, or none. */
export const NAME_LETTERS = 'untrustedcontent';

/** The letters of one scan and, for each, the original span [start, end) it came from. */
interface Letters {
  text: string;
  start: Int32Array;
  end: Int32Array;
}

class LetterBuffer {
  private codes: Uint8Array;
  private starts: Int32Array;
  private ends: Int32Array;
  private length = 0;

  constructor(capacity: number) {
    const size = Math.max(16, capacity);
    this.codes = new Uint8Array(size);
    this.starts = new Int32Array(size);
    this.ends = new Int32Array(size);
  }

  /** Adds the letters of a reading (a reading may hold several: `ﬆ` reads "st"), and `<`. */
  add(reading: string, start: number, end: number): void {
    for (let k = 0; k < reading.length; k++) {
      const c = reading.charCodeAt(k);
      if ((c < 0x61 || c > 0x7a) && c !== LT) continue;
      if (this.length === this.codes.length) this.grow();
      this.codes[this.length] = c;
      this.starts[this.length] = start;
      this.ends[this.length] = end;
      this.length++;
    }
  }

  private grow(): void {
    const size = this.codes.length * 2;
    const codes = new Uint8Array(size);
    codes.set(this.codes);
    this.codes = codes;
    const starts = new Int32Array(size);
    starts.set(this.starts);
    this.starts = starts;
    const ends = new Int32Array(size);
    ends.set(this.ends);
    this.ends = ends;
  }

  done(): Letters {
    const text = Buffer.from(this.codes.buffer, 0, this.length).toString('latin1');
    return { text, start: this.starts.subarray(0, this.length), end: this.ends.subarray(0, this.length) };
  }
}

const LT = 0x3c;
const GT = 0x3e;
/**
 * Only `<` itself (and its NFKC twins ＜ ﹤) keeps two letters of the name apart: a lookalike
 * bracket inside the name (`untrusted≺content`) is a gap like any other, so it hides nothing.
 */
function scanReading(reading: string, cp: number): string {
  if (!reading.includes('<') || cp === LT || cp === 0xff1c || cp === 0xfe64) return reading;
  return reading.replaceAll('<', ' ');
}

/** The tag characters that mirror printable ASCII (U+E0020-U+E007E). */
const TAG_ASCII_FIRST = 0xe0020;
const TAG_ASCII_LAST = 0xe007e;

function startsWith(units: Units, at: number, ascii: string): boolean {
  if (at + ascii.length > units.length) return false;
  for (let k = 0; k < ascii.length; k++) {
    if (units.cp[at + k] !== ascii.charCodeAt(k)) return false;
  }
  return true;
}

/** Where `ascii` next starts at or after `from`, or -1. */
function indexOfUnits(units: Units, ascii: string, from: number): number {
  for (let k = from; k + ascii.length <= units.length; k++) {
    if (units.cp[k] === ascii.charCodeAt(0) && startsWith(units, k, ascii)) return k;
  }
  return -1;
}

/**
 * Where the comment opened at `open` ends, as browsers read it: at `-->` or `--!>`, searched from
 * `open + 2` so that `<!-->` and `<!--->` are whole (empty) comments; an unclosed one runs to the end.
 */
function commentEnd(units: Units, open: number): number {
  const HYPHEN = 0x2d;
  for (let j = open + 2; j + 2 < units.length; j++) {
    if (units.cp[j] !== HYPHEN || units.cp[j + 1] !== HYPHEN) continue;
    if (units.cp[j + 2] === GT) return j + 3;
    if (units.cp[j + 2] === 0x21 && units.cp[j + 3] === GT) return j + 4;
  }
  return units.length;
}

const TAG_START = /^[A-Za-z/!?]$/;
/** Longest tag taken out of the rendered scan; longer `<...>` runs stay (and so stay visible). */
const MAX_TAG = 4096;

/**
 * Marks the units a browser would not render as text: HTML comments, the CDATA markers (not
 * their content) and tags. Each unit is looked at a bounded number
 * of times, so this is linear.
 */
function hiddenUnits(units: Units): Uint8Array {
  const hidden = new Uint8Array(units.length);
  // The next `]]>` at or after a position; asked with growing positions, so searched once.
  let cdataClose = -2;
  const nextCdataClose = (from: number) => {
    if (cdataClose === -1 || cdataClose >= from) return cdataClose;
    cdataClose = indexOfUnits(units, ']]>', from);
    return cdataClose;
  };
  let k = 0;
  while (k < units.length) {
    if (units.cp[k] !== LT) {
      k++;
      continue;
    }
    if (startsWith(units, k, '<!--')) {
      const end = commentEnd(units, k);
      hidden.fill(1, k, end);
      k = end;
      continue;
    }
    if (startsWith(units, k, '<![CDATA[')) {
      hidden.fill(1, k, k + 9);
      const close = nextCdataClose(k + 9);
      if (close !== -1) hidden.fill(1, close, close + 3);
      k += 9;
      continue;
    }
    const next = units.cp[k + 1];
    if (next === undefined || !TAG_START.test(String.fromCodePoint(next))) {
      k++;
      continue;
    }
    let j = k + 1;
    while (j < units.length && j - k < MAX_TAG && units.cp[j] !== LT && units.cp[j] !== GT) j++;
    if (units.cp[j] === GT) {
      hidden.fill(1, k, j + 1);
      k = j + 1;
    } else k = j;
  }
  return hidden;
}

/** The three scans of a text (see the top of this file). */
export function skeletons(text: string): Letters[] {
  const read = createReader();
  const raw = new LetterBuffer(text.length);
  // Without `&` there is nothing to decode, and without `<` nothing to hide: the scans agree.
  const decodes = text.includes('&');
  const hides = text.includes('<');
  const decoder = new ReferenceDecoder(decodes || hides ? text.length : 0);
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i) as number;
    const width = cp > 0xffff ? 2 : 1;
    const reading = read(cp);
    if (reading !== '') {
      raw.add(scanReading(reading, cp), i, i + width);
      if (decodes || hides) decoder.push(cp, i, i + width);
    } else if (cp >= TAG_ASCII_FIRST && cp <= TAG_ASCII_LAST) {
      // Invisible to a person, but a model may read a tag character as the ASCII it mirrors
      // (U+E0075 as `u`): the raw scan reads it so; the others drop it.
      raw.add(scanReading(read(cp - 0xe0000), cp), i, i + width);
    }
    i += width;
  }
  if (!decodes && !hides) return [raw.done()];
  const units = decoder.finish();
  const hidden = hiddenUnits(units);
  const decoded = new LetterBuffer(units.length);
  const rendered = new LetterBuffer(units.length);
  for (let k = 0; k < units.length; k++) {
    const reading = read(units.cp[k] as number);
    if (reading === '') continue;
    const start = units.start[k] as number;
    const end = units.end[k] as number;
    const scanned = scanReading(reading, units.cp[k] as number);
    decoded.add(scanned, start, end);
    if (hidden[k] === 0) rendered.add(scanned, start, end);
  }
  return [raw.done(), decoded.done(), rendered.done()];
}

/** Letters of one occurrence closer than this in the original stay one span; farther ones split. */
const CLUSTER_GAP = 64;

/**
 * Every occurrence of the tag name in any scan, as the original spans that hold its letters: one
 * span when the letters sit together, several when a long run of other text separates them (that
 * text is not the name's and is kept).
 */
export function nameOccurrences(text: string): Array<Array<[number, number]>> {
  const found: Array<Array<[number, number]>> = [];
  for (const letters of skeletons(text)) {
    for (let at = letters.text.indexOf(NAME_LETTERS); at !== -1; ) {
      const spans: Array<[number, number]> = [];
      for (let k = at; k < at + NAME_LETTERS.length; k++) {
        const start = letters.start[k] as number;
        const end = letters.end[k] as number;
        const last = spans.at(-1);
        if (last && start - last[1] <= CLUSTER_GAP) last[1] = Math.max(last[1], end);
        else spans.push([start, end]);
      }
      found.push(spans);
      at = letters.text.indexOf(NAME_LETTERS, at + NAME_LETTERS.length);
    }
  }
  return found;
}

/** What one character reads as on its own (NFKC, prototype, lower case; '' when invisible). */
export function readingOf(ch: string): string {
  return readCodePoint(ch.codePointAt(0) as number);
}
