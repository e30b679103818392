// What one code point reads as, for the fence's scan: NFKC, marks dropped, the UTS #39 prototype,
// lower case, all precomputed into confusables-data.ts for the characters that matter. Anything
// else visible is a gap; anything invisible is nothing at all.
import { READINGS } from './confusables-data.ts';

/** The reading of a visible character that holds nothing the fence looks for. */
export const GAP = '\uFFFD';

/** Built once from constant data and never changed. */
const TABLE: ReadonlyMap<number, string> = new Map(
  READINGS.flatMap(([reading, chars]) =>
    [...chars].map((ch) => [ch.codePointAt(0) as number, reading] as const),
  ),
);

/** ASCII: letters in lower case, `0` as `o` (UTS #39), controls other than line breaks and tab gone. */
const ASCII: readonly string[] = Array.from({ length: 128 }, (_, c) => {
  if ((c < 0x20 && (c < 0x09 || c > 0x0d)) || c === 0x7f) return '';
  if (c === 0x30) return 'o';
  return String.fromCharCode(c).toLowerCase();
});

/**
 * Characters no reader sees: format characters (zero-width, soft hyphen, bidi controls, the tag
 * characters of U+E0000), default ignorables (variation selectors, Hangul fillers), controls and
 * combining marks (so `ụ` and `u\u0323` read as `u`).
 */
const INVISIBLE = /^[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Cc}\p{M}]$/u;

/** What one code point reads as: its prototype's letters and symbols, GAP, or '' when invisible. */
export function readCodePoint(cp: number): string {
  if (cp < 0x80) return ASCII[cp] as string;
  const known = TABLE.get(cp);
  if (known !== undefined) return known;
  return INVISIBLE.test(String.fromCodePoint(cp)) ? '' : GAP;
}

/** A reader for one scan; it remembers the characters it has judged, for that scan only. */
export function createReader(): (cp: number) => string {
  const seen = new Map<number, string>();
  return (cp) => {
    if (cp < 0x80) return ASCII[cp] as string;
    const known = TABLE.get(cp);
    if (known !== undefined) return known;
    let reading = seen.get(cp);
    if (reading === undefined) {
      // A lone surrogate is visible garbage: a gap, never a way to hide a letter.
      reading = INVISIBLE.test(String.fromCodePoint(cp)) ? '' : GAP;
      seen.set(cp, reading);
    }
    return reading;
  };
}
