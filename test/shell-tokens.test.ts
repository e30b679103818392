// The quick reader must read every command it answers for exactly as shell-quote does, and leave
// the rest to shell-quote: a difference would let the classifier and the guard judge words the
// shell-quote reading (the one every other table was written against) never produced.
import fc from 'fast-check';
import { parse } from 'shell-quote';
import { describe, expect, it } from 'vitest';
import { CORPUS } from '../bench/classifier.ts';
import { quickTokens } from '../src/permissions/shell-tokens.ts';

/** Characters either reader treats specially, and some ordinary ones around them. */
const ALPHABET = [
  'a',
  'b',
  '-',
  '.',
  '/',
  '=',
  ' ',
  ' ',
  '\t',
  "'",
  '"',
  '\\',
  '|',
  '&',
  ';',
  '(',
  ')',
  '<',
  '>',
  '*',
  '?',
  '[',
  ']',
  '{',
  '}',
  '`',
  '!',
  '~',
  ',',
  ':',
  '@',
  '%',
  '^',
  '+',
  '\u0001',
  '\u0002',
  '\u0003',
  '\u0004',
  '\u0005',
  '\u0006',
  '\u0007',
  '$',
  '#',
  '\n',
  '\r',
  '\u00a0',
  '\u2028',
  '\u0000',
  'é',
];

const TABLE: Array<[string, 'quick' | 'shell-quote']> = [
  ['ls -la', 'quick'],
  ['', 'quick'],
  ['   \t ', 'quick'],
  ['grep -rn \'a b\' "c\\"d" e\\ f', 'quick'],
  ['echo "\\q\\\\"', 'quick'],
  ['echo \'\' ""', 'quick'],
  ['a||b|&c&&d&>e&>>f;;&g;;h;&i', 'quick'],
  ['cat <(x) >(y) <<<z <<-EOF <<EOF <<(w) <&3 <>f >>g >&2 >|h', 'quick'],
  ['ls *.ts a\\*b "c*d" \'e?f\' g?', 'quick'],
  ['find . -name x\\?', 'quick'],
  ['\u0001x\u0002 \u0003*.md \u0005a\u0006{b,c} \u0004', 'quick'],
  ['`date` !x {a,b} [ab] ~/x', 'quick'],
  ['echo $HOME', 'shell-quote'],
  ['echo a#b', 'shell-quote'],
  ['a\nb', 'shell-quote'],
  ["echo 'unclosed", 'shell-quote'],
  ['echo "unclosed', 'shell-quote'],
  ['echo trailing\\', 'shell-quote'],
  ['echo "x\\', 'shell-quote'],
  ['echo \u00a0x', 'shell-quote'],
  ['echo café', 'shell-quote'],
];

describe('quickTokens', () => {
  it.each(TABLE)('%j is read by %s, as shell-quote reads it', (command, reader) => {
    const quick = quickTokens(command);
    if (reader === 'shell-quote') expect(quick).toBeUndefined();
    else expect(quick).toEqual(parse(command));
  });

  it('reads what the benchmark corpus holds without shell-quote, or not at all', () => {
    let read = 0;
    for (const command of CORPUS) {
      const quick = quickTokens(command);
      if (quick === undefined) continue;
      read++;
      expect(quick, command).toEqual(parse(command));
    }
    expect(read).toBeGreaterThan(CORPUS.length / 3);
  });

  it.each([
    ['every character either reader treats specially', ALPHABET, 2_000],
    [
      'only what it models (nearly every command answered)',
      ALPHABET.filter((c) => quickTokens(c) !== undefined || c === "'" || c === '"' || c === '\\'),
      10_000,
    ],
  ])(
    'agrees with shell-quote on every command it answers for, over %s (fast-check)',
    (_, alphabet, least) => {
      let answered = 0;
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...alphabet), { maxLength: 40 }), (chars) => {
          const command = chars.join('');
          const quick = quickTokens(command);
          if (quick === undefined) return;
          answered++;
          expect(quick).toEqual(parse(command));
        }),
        { numRuns: 20_000 },
      );
      // The property is only as strong as the commands it was tried on.
      expect(answered).toBeGreaterThan(least);
    },
  );
});
