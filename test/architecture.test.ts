import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The import specifiers of a file: static, dynamic and re-exports. */
function importsOf(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]/g,
    /\bimport\s+['"]([^'"]+)['"]/g,
  ];
  for (const pattern of patterns) for (const m of source.matchAll(pattern)) found.push(m[1] as string);
  return found;
}

/** Imports of `file` that land outside the core: adapters/ or the cli composition root. */
function outwardImports(file: string, source: string): string[] {
  return importsOf(source).filter((spec) => {
    if (!spec.startsWith('.')) return /^(adapters|cli)\//.test(spec);
    const target = relative(ROOT, resolve(file, '..', spec));
    return /^(adapters|cli)(\/|$)/.test(target);
  });
}

const PLATFORM_WORDS = ['chat_id', 'callback_query', 'm.reaction', 'mxc://', 'grammy', 'matrix-bot-sdk'];

describe('the core never depends on its adapters', () => {
  it('the checker catches every form of an outward import', () => {
    const file = join(ROOT, 'src/core/example.ts');
    const bad = [
      "import { x } from '../../adapters/console/console-channel.ts';",
      "export * from '../../adapters/telegram/bot.ts';",
      "const m = await import('../../cli/main.ts');",
      "import '../../adapters/matrix/side-effect.ts';",
    ];
    for (const line of bad) expect(outwardImports(file, line), line).toHaveLength(1);
    expect(outwardImports(file, "import { y } from '../store/db.ts';")).toEqual([]);
    expect(outwardImports(file, "import pino from 'pino';")).toEqual([]);
  });

  const files = tsFiles(join(ROOT, 'src'));
  it('finds the core sources', () => expect(files.length).toBeGreaterThan(10));

  it.each(files.map((f) => [relative(ROOT, f), f]))(
    '%s imports nothing from adapters/ or cli/',
    (_name, file) => {
      expect(outwardImports(file, readFileSync(file, 'utf8'))).toEqual([]);
    },
  );

  it.each(files.map((f) => [relative(ROOT, f), f]))('%s uses no platform words', (_name, file) => {
    const source = readFileSync(file, 'utf8');
    expect(PLATFORM_WORDS.filter((word) => source.includes(word))).toEqual([]);
  });
});

/** Local imports of each file of `files`, as resolved paths inside the same set. */
function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  return new Map(
    files.map((file) => [
      file,
      importsOf(readFileSync(file, 'utf8'))
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => resolve(file, '..', spec))
        .filter((target) => known.has(target)),
    ]),
  );
}

/** One import cycle of the graph (as a path of files), or undefined when there is none. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined;
    if (state.get(file) === 'open') return [...path.slice(path.indexOf(file)), file];
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('the core has no import cycle', () => {
  it('the cycle finder finds a cycle and accepts a tree', () => {
    expect(
      findCycle(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
        ]),
      ),
    ).toEqual(['a', 'b', 'c', 'a']);
    expect(
      findCycle(
        new Map([
          ['a', ['b', 'c']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toBeUndefined();
  });

  it('src/core and the channel port import each other in one direction only', () => {
    const files = [...tsFiles(join(ROOT, 'src/core')), ...tsFiles(join(ROOT, 'src/channel'))];
    const cycle = findCycle(importGraph(files));
    expect(cycle?.map((f) => relative(ROOT, f))).toBeUndefined();
  });

  it('the port knows nothing of the core', () => {
    const port = readFileSync(join(ROOT, 'src/channel/port.ts'), 'utf8');
    expect(importsOf(port).filter((spec) => spec.includes('/core/'))).toEqual([]);
  });
});

/**
 * Lengths of the functions of a source, by their bodies' braces: a declaration, a method or an
 * arrow function whose body opens on its first line. Strings, template literals and comments are
 * blanked first so their braces do not count.
 */
function functionLengths(source: string): Array<{ line: number; lines: number }> {
  const blank = source
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/\/\/[^\n]*/g, '')
    .replace(/(['"`])(?:\\.|(?!\1)[^\\\n]|\n(?<=`[^`]*))*\1/g, (m) => m.replace(/[^\n]/g, ' '));
  const lines = blank.split('\n');
  const found: Array<{ line: number; lines: number }> = [];
  // The line a body opens on: `function f(…) {`, `(…) => {`, `name(…) {`, or `): T {` closing a long signature.
  const opener =
    /(\bfunction\b[^{;]*\)|\)\s*(:\s*[^={;]+)?=>|^\s*(async\s+)?[A-Za-z_$][\w$]*\s*\([^;]*\)\s*(:\s*[^={;]+)?|^\s*\)(\s*:\s*[^={;]+)?)\s*\{\s*$/;
  const statement = /^\s*(\}\s*)?(if|for|while|switch|catch|with|else if)\b/;
  lines.forEach((text, index) => {
    if (!opener.test(text) || statement.test(text)) return;
    let depth = 0;
    for (let i = index; i < lines.length; i++) {
      for (const ch of lines[i] as string) {
        if (ch === '{') depth++;
        if (ch === '}') depth--;
      }
      if (depth <= 0) {
        found.push({ line: index + 1, lines: i - index + 1 });
        return;
      }
    }
  });
  return found;
}

describe('core functions stay short', () => {
  it('the measure counts a function from its line to its closing brace', () => {
    const source = [
      'function a() {',
      '  const s = "}";',
      '  if (x) {',
      '  }',
      '}',
      'const b = () => {',
      '};',
      'async function c(',
      '  x: number,',
      '): Promise<void> {',
      '  return;',
      '}',
    ].join('\n');
    expect(functionLengths(source)).toEqual([
      { line: 1, lines: 5 },
      { line: 6, lines: 2 },
      { line: 10, lines: 3 },
    ]);
  });

  it.each(tsFiles(join(ROOT, 'src/core')).map((f) => [relative(ROOT, f), f]))(
    '%s has no function of 80 lines or more',
    (_name, file) => {
      const long = functionLengths(readFileSync(file, 'utf8')).filter((f) => f.lines >= 80);
      expect(long).toEqual([]);
    },
  );
});
