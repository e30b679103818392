/** One installed skill pack: `<dir>/<name>/SKILL.md`, loaded once at startup. */
export interface Skill {
  /** Kebab-case, equal to its folder name; what `load_skill` is called with. */
  name: string;
  /** One line (whitespace collapsed) with a "Use when …" trigger; the whole of its index entry. */
  description: string;
  /** The text after the front matter, trimmed: principles only. */
  body: string;
  /** The SKILL.md path, as reached from the folder that was loaded. */
  file: string;
  /** The skill's folder. */
  dir: string;
  /** Files under `references/`, relative to `dir` (e.g. `references/testing.md`), sorted. */
  references: readonly string[];
}

/** Lower-case words of letters and digits joined by single hyphens. */
export const KEBAB_CASE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** A body longer than this must move detail into `references/`. */
export const MAX_BODY_LINES = 500;

/** The index carries every description on every request, so each stays short. */
export const MAX_DESCRIPTION_LENGTH = 300;

/** The only front matter keys a skill may set. */
export const FRONT_MATTER_KEYS: readonly string[] = ['name', 'description'];

/**
 * The headings (level 1 and 2) a body may use, matched case-insensitively, a trailing colon
 * ignored. Principles and Rules carry the discipline itself; Process orders it; Output format
 * describes the shape of what to produce; Anti-rationalization, Red flags and Evidence required
 * are the optional sections of the format; References points at `references/` files. Deeper
 * headings (###) are free, but are still checked for worked examples.
 */
export const ALLOWED_SECTIONS: readonly string[] = [
  'Principles',
  'Rules',
  'Process',
  'Output format',
  'Anti-rationalization',
  'Red flags',
  'Evidence required',
  'References',
];

/** One problem line: the file (and line), what is wrong, and how to fix it. */
export function problemLine(file: string, what: string, fix: string, line?: number): string {
  return `${file}${line === undefined ? '' : ` line ${line}`}: ${what}; ${fix}`;
}

/** A suggestion for a name that is not kebab-case. */
export function toKebabCase(name: string): string {
  return (
    name
      .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'my-skill'
  );
}
