// Properties of the guard's filename expansion, with the real shells as the oracle: the matcher
// agrees with bash 5.2 (its default glob options) over generated patterns and file sets, and no
// pattern that dash would expand to `.` or `..` is ever let through.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandGlob, globBudget } from '../src/permissions/glob-expand.ts';
import { judgeShell } from '../src/permissions/judge-shell.ts';
import { guardCommand } from '../src/permissions/policy-guard.ts';
import { parseCommand } from '../src/permissions/shell-parse.ts';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'steward-globprops-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const TOKENS = [
  'a',
  'b',
  'A',
  '.',
  '-',
  '*',
  '?',
  '[ab]',
  '[!a]',
  '[^b]',
  '[.]',
  '[[:alpha:]]',
  '[[:punct:]]',
  '[a-b]',
  '[]a]',
  '[.-a]',
  '[',
  ']',
  '[b-a]',
  '[!.]',
  '[[:upper:]]',
];
const segment = fc.array(fc.constantFrom(...TOKENS), { minLength: 1, maxLength: 4 }).map((t) => t.join(''));
const pattern = fc.oneof(
  segment,
  segment.map((s) => `d/${s}`),
  fc.tuple(segment, segment).map(([a, b]) => `${a}/${b}`),
  segment.map((s) => `${s}/`),
);
const name = fc
  .array(fc.constantFrom('a', 'b', 'A', '.', '-', 'x'), { minLength: 1, maxLength: 3 })
  .map((c) => c.join(''))
  .filter((n) => n !== '.' && n !== '..');
const fileSet = fc.record({
  top: fc.uniqueArray(name, { maxLength: 8 }),
  inner: fc.uniqueArray(name, { maxLength: 4 }),
});

const BASH_OPTIONS = 'shopt -s globskipdots; shopt -u dotglob nocaseglob extglob failglob nullglob globstar';

/** What bash prints for each pattern, run in `dir`. */
function bashExpands(dir: string, patterns: string[]): string[][] {
  const script = [
    BASH_OPTIONS,
    ...patterns.map((p) => `for w in ${p}; do printf '%s\\n' "$w"; done; echo '\u0001'`),
  ];
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', script.join('\n')], {
    cwd: dir,
    env: { LC_ALL: 'C', PATH: process.env.PATH },
  });
  return out
    .toString()
    .split('\u0001\n')
    .slice(0, patterns.length)
    .map((block) =>
      block
        .split('\n')
        .filter((line) => line !== '')
        .sort(),
    );
}

let runs = 0;
function populate(files: { top: string[]; inner: string[] }): string {
  const dir = join(root, `set${runs++}`);
  mkdirSync(join(dir, 'd'), { recursive: true });
  for (const f of files.top) if (f !== 'd') writeFileSync(join(dir, f), '');
  for (const f of files.inner) writeFileSync(join(dir, 'd', f), '');
  return dir;
}

describe('filename expansion agrees with bash 5.2', () => {
  it('over generated patterns and file sets', () => {
    fc.assert(
      fc.property(fileSet, fc.array(pattern, { minLength: 1, maxLength: 6 }), (files, patterns) => {
        const dir = populate(files);
        const expected = bashExpands(dir, patterns);
        for (const [i, p] of patterns.entries()) {
          const ours = [...(expandGlob(p, dir, globBudget(4096, 10_000)) ?? ['<unknown>'])].sort();
          expect(
            ours,
            `pattern ${p} in ${[...files.top, ...files.inner.map((f) => `d/${f}`)].join(' ')}`,
          ).toEqual(expected[i]);
        }
      }),
      { numRuns: 250 },
    );
  });
});

/** Which of the segments dash expands to `.` or `..` in a folder holding nothing else. */
function dashReachesDots(dir: string, segments: string[]): boolean[] {
  const script = segments.map((s) => `for w in ${s}; do printf '%s\\n' "$w"; done; echo '\u0001'`).join('\n');
  const out = execFileSync('dash', ['-c', script], {
    cwd: dir,
    env: { LC_ALL: 'C', PATH: process.env.PATH },
  });
  return out
    .toString()
    .split('\u0001\n')
    .slice(0, segments.length)
    .map((block) => block.split('\n').some((line) => line === '.' || line === '..'));
}

/** dash is the oracle for "could match `..`"; where it is not installed the property cannot run. */
const hasDash = (() => {
  try {
    execFileSync('dash', ['-c', 'true']);
    return true;
  } catch {
    return false;
  }
})();

describe('no pattern that could match . or .. is let through', () => {
  const dotted = segment.map((s) => `.${s}`);
  it.skipIf(!hasDash)('for any pattern dash expands to . or .., in any position and any dialect', () => {
    const empty = join(root, 'empty');
    mkdirSync(empty, { recursive: true });
    let reached = 0;
    fc.assert(
      fc.property(fc.array(fc.oneof(dotted, segment), { minLength: 8, maxLength: 16 }), (segments) => {
        const dots = dashReachesDots(empty, segments);
        for (const [i, s] of segments.entries()) {
          // A word with no glob character is not expanded (`.` is just the folder).
          if (!dots[i] || !/[*?[]/.test(s)) continue;
          reached++;
          expect(judgeShell(`cat ${s}/etc/passwd`, empty).verdict, s).toBe('deny');
          // As a last word, only the strict dialect refuses it: the chain runs bash 5.2, whose
          // globskipdots keeps `.` and `..` out of every expansion.
          expect(guardCommand(parseCommand(`ls ${s}`), empty, []), s).toBeDefined();
          expect(guardCommand(parseCommand(`cat ${s}/x`), empty, [], { dialect: 'bash' }), s).toBeDefined();
        }
      }),
      { numRuns: 200 },
    );
    // The generator does reach the case it is about (about one hit in two runs: 200 runs keep a
    // bad seed far above the floor, where 60 once fell to 16).
    expect(reached).toBeGreaterThan(20);
  });
});
