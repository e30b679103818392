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
