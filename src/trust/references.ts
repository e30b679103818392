// HTML/XML character references decoded for the fence's scan, repeatedly (`&amp;lt;` is `<`), each
// decoded character remembering the original span it came from. Decoding works on the output as it
// grows, so a decoded `&`, `#` or `;` takes part in the next reference, whatever the nesting depth,
// in one linear pass.
import { LEGACY_REFERENCES, NAMED_REFERENCES } from './confusables-data.ts';

const AMP = 0x26;
const SEMI = 0x3b;
const HASH = 0x23;
/** What an unknown `&name;` becomes: a gap, so its letters cannot split a word. */
const UNKNOWN = 0x20;
/** A longer reference is left as written (names are at most 32 characters). */
const MAX_BODY = 64;

const LEGACY = new Set(LEGACY_REFERENCES);
const LONGEST_LEGACY = Math.max(...LEGACY_REFERENCES.map((n) => n.length));

/** HTML reads numeric references 0x80-0x9F as windows-1252 (`&#154;` is š). */
const WINDOWS_1252 = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d,
  0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a,
  0x153, 0x9d, 0x17e, 0x178,
];

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const isAlnum = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isBodyUnit = (c: number) => isAlnum(c) || c === HASH;

function numericValue(digits: string, hex: boolean): number {
  const value = digits.length > 8 ? Number.POSITIVE_INFINITY : Number.parseInt(digits, hex ? 16 : 10);
  if (value === 0 || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return 0xfffd;
  if (value >= 0x80 && value <= 0x9f) return WINDOWS_1252[value - 0x80] as number;
  return value;
}

/** The decoded units: code points and, for each, the original span [start, end) it came from. */
export interface Units {
  cp: Int32Array;
  start: Int32Array;
  end: Int32Array;
  length: number;
}

interface Decoded {
  /** The decoded code point. */
  cp: number;
  /** How many body units it consumed. */
  used: number;
}

/** The reference a body (what follows `&`) starts with, or null. `terminated`: a `;` follows it. */
function decodeBody(body: string, terminated: boolean): Decoded | null {
  if (body.charCodeAt(0) === HASH) {
    const hex = body.length > 1 && (body[1] === 'x' || body[1] === 'X');
    const from = hex ? 2 : 1;
    let to = from;
    while (to < body.length && (hex ? isHex : isDigit)(body.charCodeAt(to))) to++;
    if (to === from) return null;
    return { cp: numericValue(body.slice(from, to).replace(/^0+(?=.)/, ''), hex), used: to };
  }
  if (terminated) {
    const named = NAMED_REFERENCES[body];
    if (named !== undefined) return { cp: named.codePointAt(0) as number, used: body.length };
  }
  for (let n = Math.min(LONGEST_LEGACY, body.length); n >= 2; n--) {
    const name = body.slice(0, n);
    if (!LEGACY.has(name)) continue;
    const named = NAMED_REFERENCES[name];
    return { cp: named === undefined ? UNKNOWN : (named.codePointAt(0) as number), used: n };
  }
  // Any other `&name;` is read as a code whatever it stands for (the table keeps only references
  // whose text matters, and every name that extends a legacy one, like `&notin;`).
  if (terminated && /^[A-Za-z][A-Za-z0-9]{0,31}$/.test(body)) return { cp: UNKNOWN, used: body.length };
  return null;
}

/** Collects units and decodes references as they complete. */
export class ReferenceDecoder {
  private cp: Int32Array;
  private start: Int32Array;
  private end: Int32Array;
  /** For each unit, how many body units (alphanumerics and `#`) end there in a row. */
  private run: Int32Array;
  private length = 0;

  constructor(capacity: number) {
    const size = Math.max(16, capacity);
    this.cp = new Int32Array(size);
    this.start = new Int32Array(size);
    this.end = new Int32Array(size);
    this.run = new Int32Array(size);
  }

  push(cp: number, start: number, end: number): void {
    const n = this.length;
    if (n === this.cp.length) this.grow();
    this.cp[n] = cp;
    this.start[n] = start;
    this.end[n] = end;
    const body = isBodyUnit(cp);
    this.run[n] = body ? (n > 0 ? (this.run[n - 1] as number) : 0) + 1 : 0;
    this.length = n + 1;
    // Only a unit that ends a body right after an `&` can complete a reference.
    if (body || n === 0) return;
    const length = this.run[n - 1] as number;
    if (length > 0 && n - length - 1 >= 0 && this.cp[n - length - 1] === AMP) {
      this.decodeBefore(n, cp === SEMI);
    }
  }

  /** The units once the input has ended (a reference may end the input without a `;`). */
  finish(): Units {
    this.decodeBefore(this.length, false);
    return { cp: this.cp, start: this.start, end: this.end, length: this.length };
  }

  private grow(): void {
    const size = this.cp.length * 2;
    const grown = (from: Int32Array) => {
      const next = new Int32Array(size);
      next.set(from);
      return next;
    };
    this.cp = grown(this.cp);
    this.start = grown(this.start);
    this.end = grown(this.end);
    this.run = grown(this.run);
  }

  /**
   * Decodes the reference whose body ends just before unit `at` (`;` when `terminated`, some other
   * character or the end of input otherwise), then pushes back what followed it, so that anything
   * the decoded character completes is decoded in turn.
   */
  private decodeBefore(at: number, terminated: boolean): void {
    const length = at > 0 ? (this.run[at - 1] as number) : 0;
    const amp = at - length - 1;
    if (length === 0 || length > MAX_BODY || amp < 0 || this.cp[amp] !== AMP) return;
    let body = '';
    for (let k = amp + 1; k < at; k++) body += String.fromCharCode(this.cp[k] as number);
    const decoded = decodeBody(body, terminated);
    if (decoded === null) return;
    const whole = decoded.used === length;
    const lastUsed = whole && terminated ? at : amp + decoded.used;
    const rest: Array<[number, number, number]> = [];
    for (let k = lastUsed + 1; k < this.length; k++) {
      rest.push([this.cp[k] as number, this.start[k] as number, this.end[k] as number]);
    }
    const start = this.start[amp] as number;
    const end = this.end[lastUsed] as number;
    this.length = amp;
    this.push(decoded.cp, start, end);
    for (const [cp, s, e] of rest) this.push(cp, s, e);
  }
}
