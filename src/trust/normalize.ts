// The matching copy of a text: what a reader would take each character for, so that forged fence
// markers can be found however they are disguised. It is only ever used to find spans; the text the
// model receives is the original with those spans replaced, never this copy.

/** Characters a reader may take for `<` or `>` (NFKC already folds the fullwidth and small forms). */
const OPENING_BRACKETS =
  '<\uFF1C\uFE64\u2329\u3008\u2039\u276E\u27E8\u02C2\u1438\u16B2\u276C\u2770\u29FC\u27EA\u300A\u00AB' +
  '\u226A\u2264\u22D6\uFE3F\u{1D236}';
const CLOSING_BRACKETS =
  '>\uFF1E\uFE65\u232A\u3009\u203A\u276F\u27E9\u02C3\u1433\u276D\u2771\u29FD\u27EB\u300B\u00BB' +
  '\u226B\u2265\u22D7\uFE40\u{1D237}\u{16F3F}';

/**
 * Letters from other scripts that look like Latin ones (Cyrillic, Greek, Armenian, Coptic, small
 * capitals and a few more), each string listing the lookalikes of one Latin letter. Capitals are
 * listed where their lower case would look like a different letter (Greek Ν is N, ν is v).
 */
const CONFUSABLE_LETTERS: Record<string, string> = {
  a: '\u0430\u0410\u03B1\u0391\u0251\u237A',
  b: '\u0412\u0392\u0432\u0184',
  c: '\u0441\u0421\u03F2\u03F9\u1D04\u2CA5\u2CA4\u0188\u217D',
  d: '\u0501\u0257\u0256\u1D05\u146F\u217E',
  e: '\u0435\u0415\u0395\u03B5\u1D07\u0454\u0404\u212E\u04BD\u0113',
  h: '\u04BB\u04BA\u0397\u043D\u041D',
  i: '\u0456\u0406\u0131\u0269\u03B9\u0399\u04CF',
  j: '\u0458\u0408',
  k: '\u043A\u041A\u039A\u03BA',
  m: '\u041C\u039C\u043C',
  n: '\u0578\u03B7\u043F\u0274\u039D\u057C',
  o: '\u043E\u041E\u03BF\u039F\u0585\u03C3\u1D0F\u2C9F\u2C9E\u0B66\u0AE6\u0966\u0D20',
  p: '\u0440\u0420\u03C1\u03A1',
  r: '\u0433\u0280\u027E\u1D26\u0491',
  s: '\u0455\u0405\uA731\u01BD\u0282',
  t: '\u0442\u0422\u03C4\u03A4\u1D1B\u0167\u01AD',
  u: '\u057D\u03C5\u028B\u1D1C\uA79F\u0446',
  v: '\u03BD\u0474\u0475',
  w: '\u0461\u051D',
  x: '\u0445\u0425\u03C7\u03A7',
  y: '\u0443\u0423\u03A5\u04AF',
  z: '\u0396',
};

const FOLD = new Map<string, string>();
for (const ch of OPENING_BRACKETS) FOLD.set(ch, '<');
for (const ch of CLOSING_BRACKETS) FOLD.set(ch, '>');
for (const [latin, lookalikes] of Object.entries(CONFUSABLE_LETTERS)) {
  for (const ch of lookalikes) FOLD.set(ch, latin);
}

/** Invisible characters: format (Cf, which holds zero-width, soft hyphen, BOM, bidi), ignorables, controls. */
const INVISIBLE = /^[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Cc}]$/u;
const MARKS = /\p{M}/gu;

/** The fold of each ASCII character: lower case, controls other than whitespace dropped. */
const ASCII_FOLD: string[] = Array.from({ length: 128 }, (_, c) => {
  if ((c < 0x20 && (c < 0x09 || c > 0x0d)) || c === 0x7f) return '';
  return String.fromCharCode(c).toLowerCase();
});

const cache = new Map<number, string>();

function foldOne(ch: string): string {
  const direct = FOLD.get(ch);
  if (direct !== undefined) return direct;
  const lower = ch.toLowerCase();
  return FOLD.get(lower) ?? lower;
}

/** What one non-ASCII code point reads as: NFKC, accents stripped, lookalikes folded, lower case. */
function foldCodePoint(cp: number, ch: string): string {
  const cached = cache.get(cp);
  if (cached !== undefined) return cached;
  let folded: string;
  if (INVISIBLE.test(ch)) folded = '';
  else if (FOLD.has(ch)) folded = FOLD.get(ch) as string;
  else {
    folded = '';
    for (const part of ch.normalize('NFKC').normalize('NFD').replace(MARKS, '')) {
      folded += INVISIBLE.test(part) ? '' : foldOne(part);
    }
  }
  if (cache.size < 65_536) cache.set(cp, folded);
  return folded;
}

export interface MatchingCopy {
  /** The folded text. */
  text: string;
  /** For each UTF-16 index of `text`, the index in the original where its code point starts. */
  from: Uint32Array;
}

/**
 * Builds the matching copy one original code point at a time, remembering where every folded
 * character came from, so a span found in the copy maps back to whole original code points.
 */
export function matchingCopy(input: string): MatchingCopy {
  const pieces: string[] = [];
  let from = new Uint32Array(input.length + 16);
  let length = 0;
  for (let i = 0; i < input.length; ) {
    const unit = input.charCodeAt(i);
    let folded: string;
    let width = 1;
    if (unit < 0x80) folded = ASCII_FOLD[unit] as string;
    else {
      const cp = input.codePointAt(i) as number;
      width = cp > 0xffff ? 2 : 1;
      folded = foldCodePoint(cp, input.slice(i, i + width));
    }
    if (folded.length > 0) {
      if (length + folded.length > from.length) {
        const grown = new Uint32Array(Math.max(from.length * 2, length + folded.length));
        grown.set(from);
        from = grown;
      }
      for (let k = 0; k < folded.length; k++) from[length + k] = i;
      length += folded.length;
      pieces.push(folded);
    }
    i += width;
  }
  return { text: pieces.join(''), from: from.subarray(0, length) };
}

/** The original span [start, end) of the folded span [start, end) of `copy`, in whole code points. */
export function originalSpan(
  input: string,
  copy: MatchingCopy,
  start: number,
  end: number,
): [number, number] {
  const first = copy.from[start] as number;
  const last = copy.from[end - 1] as number;
  const lastWidth = (input.codePointAt(last) as number) > 0xffff ? 2 : 1;
  return [first, last + lastWidth];
}
