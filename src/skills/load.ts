import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.ts';
import { splitFrontMatter } from './front-matter.ts';
import { KEBAB_CASE, problemLine, type Skill, toKebabCase } from './types.ts';

/** A skill that loaded, with what the validator needs beyond the public shape. */
export interface LoadedSkill {
  skill: Skill;
  /** The front matter as parsed (a mapping). */
  frontMatter: Record<string, unknown>;
  /** The file line of the body's first line, so problems can name lines. */
  bodyLine: number;
}

/**
 * Reads every skill folder of `dir` (sub-folders not starting with "."; plain files such as a
 * README are ignored). Problems that stop a skill from loading at all are returned as lines and the
 * skill is left out. A missing `dir` is a ConfigError naming it.
 */
export function readSkills(dir: string): { loaded: LoadedSkill[]; problems: string[] } {
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    throw new ConfigError(
      `skills folder ${dir} does not exist; create it, or name the folder that holds the skill packs`,
    );
  }
  if (!isDir) {
    throw new ConfigError(
      `skills folder ${dir} is not a folder; name the folder that holds one sub-folder per skill`,
    );
  }
  const loaded: LoadedSkill[] = [];
  const problems: string[] = [];
  const folders = readdirSync(dir)
    .filter((entry) => !entry.startsWith('.') && isDirectory(join(dir, entry)))
    .sort();
  for (const folder of folders) {
    const result = readSkill(dir, folder);
    if ('problems' in result) problems.push(...result.problems);
    else loaded.push(result);
  }
  return { loaded, problems };
}

/**
 * Loads the skills of `dir`, sorted by name. Throws a ConfigError naming the first skill that
 * cannot load (no SKILL.md, broken front matter, missing name or description, name not equal to
 * its folder). Content rules (trigger, examples, length, collisions) are the validator's.
 */
export function loadSkills(dir: string): Skill[] {
  const { loaded, problems } = readSkills(dir);
  const [first] = problems;
  if (first !== undefined) {
    const more = problems.length > 1 ? ` (${problems.length - 1} more)` : '';
    throw new ConfigError(`${first}${more}; steward skills validate ${dir} lists every problem`);
  }
  return loaded.map((l) => l.skill);
}

function readSkill(dir: string, folder: string): LoadedSkill | { problems: string[] } {
  const skillDir = join(dir, folder);
  const file = join(skillDir, 'SKILL.md');
  if (!existsSync(file)) {
    return {
      problems: [
        problemLine(
          skillDir,
          'no SKILL.md in this skill folder',
          'add SKILL.md with front matter name and description, or remove the folder',
        ),
      ],
    };
  }
  const parsed = splitFrontMatter(readFileSync(file, 'utf8'));
  if (!parsed.ok) return { problems: [problemLine(file, parsed.what, parsed.fix, parsed.line)] };
  const data = parsed.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return {
      problems: [
        problemLine(
          file,
          'front matter is not a mapping of keys',
          'write it as "name: <folder name>" and "description: … Use when …" lines',
          2,
        ),
      ],
    };
  }
  const frontMatter = data as Record<string, unknown>;
  const problems: string[] = [];
  const { name, description } = frontMatter;
  if (typeof name !== 'string' || name.trim() === '') {
    problems.push(
      problemLine(file, 'front matter has no name', `add "name: ${toKebabCase(folder)}" (the folder name)`),
    );
  } else if (!KEBAB_CASE.test(folder)) {
    const kebab = toKebabCase(folder);
    problems.push(
      problemLine(
        file,
        `folder "${folder}" is not a kebab-case skill name`,
        `rename the folder to "${kebab}" and set "name: ${kebab}" (lower-case letters, digits, single hyphens)`,
      ),
    );
  } else if (name !== folder) {
    problems.push(
      problemLine(
        file,
        `name "${name}" does not match its folder "${folder}"`,
        `set "name: ${folder}", or rename the folder to match`,
      ),
    );
  }
  if (typeof description !== 'string' || description.trim() === '') {
    problems.push(
      problemLine(
        file,
        'front matter has no description',
        'add "description: <what the skill is for>. Use when <the situations that call for it>."',
      ),
    );
  }
  if (problems.length > 0) return { problems };
  return {
    skill: {
      name: name as string,
      description: (description as string).replace(/\s+/g, ' ').trim(),
      body: parsed.body,
      file,
      dir: skillDir,
      references: listReferences(skillDir),
    },
    frontMatter,
    bodyLine: parsed.bodyLine,
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Files under `<skillDir>/references/`, relative to the skill folder, sorted. */
function listReferences(skillDir: string): string[] {
  const found: string[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(join(skillDir, relative)).sort()) {
      if (entry.startsWith('.')) continue;
      const path = `${relative}/${entry}`;
      if (isDirectory(join(skillDir, path))) walk(path);
      else found.push(path);
    }
  };
  if (isDirectory(join(skillDir, 'references'))) walk('references');
  return found.sort();
}
