import { scanBody } from './body-scan.ts';
import { type LoadedSkill, readSkills } from './load.ts';
import { COLLISION_THRESHOLD, descriptionSimilarity } from './similarity.ts';
import {
  ALLOWED_SECTIONS,
  FRONT_MATTER_KEYS,
  MAX_BODY_LINES,
  MAX_DESCRIPTION_LENGTH,
  problemLine,
} from './types.ts';

const TRIGGER = /\buse when\s+\S/i;
const ALLOWED = new Set(ALLOWED_SECTIONS.map((s) => s.toLowerCase()));

/**
 * Checks every skill of `dir` and returns one line per problem ("<file>[ line N]: <what is wrong>;
 * <how to fix it>"), empty when all is well. A missing `dir` is a ConfigError naming it.
 */
export function validateSkills(dir: string): string[] {
  const { loaded, problems } = readSkills(dir);
  for (const entry of loaded) problems.push(...checkSkill(entry));
  problems.push(...collisions(loaded));
  return problems;
}

function checkSkill({ skill, frontMatter, bodyLine }: LoadedSkill): string[] {
  const { file, description, body } = skill;
  const problems: string[] = [];
  for (const key of Object.keys(frontMatter)) {
    if (!FRONT_MATTER_KEYS.includes(key)) {
      problems.push(
        problemLine(
          file,
          `unknown front matter key "${key}"`,
          'remove it; only name and description are read',
        ),
      );
    }
  }
  if (!TRIGGER.test(description)) {
    problems.push(
      problemLine(
        file,
        'description has no "Use when …" trigger',
        'end the description with "Use when <the situations that call for this skill>."',
      ),
    );
  }
  if (description.length > MAX_DESCRIPTION_LENGTH) {
    problems.push(
      problemLine(
        file,
        `description is ${description.length} characters (limit ${MAX_DESCRIPTION_LENGTH})`,
        'shorten it to what the skill is for and when to use it; detail belongs in the body',
      ),
    );
  }
  if (body === '') {
    problems.push(
      problemLine(file, 'the body is empty', 'write the principles of the skill after the front matter'),
    );
    return problems;
  }
  const lines = body.split('\n').length;
  if (lines > MAX_BODY_LINES) {
    problems.push(
      problemLine(
        file,
        `the body is ${lines} lines (limit ${MAX_BODY_LINES})`,
        'move detail into references/<topic>.md files and keep the core principles in SKILL.md',
      ),
    );
  }
  const { headings, examples } = scanBody(body, bodyLine);
  for (const h of headings) {
    if (h.level > 2 || ALLOWED.has(h.text.replace(/:$/, '').toLowerCase())) continue;
    problems.push(
      problemLine(
        file,
        `section "${h.text}" is not one of the allowed sections`,
        `use only ${ALLOWED_SECTIONS.join(', ')} (### sub-headings are free)`,
        h.line,
      ),
    );
  }
  const [first, ...more] = examples;
  if (first) {
    const also =
      more.length > 0
        ? `, also at line${more.length > 1 ? 's' : ''} ${more.map((e) => e.line).join(', ')}`
        : '';
    problems.push(
      problemLine(
        file,
        `worked example in the body (${first.what}${also})`,
        'skills are principles only: state the rule the example shows, then delete the example',
        first.line,
      ),
    );
  }
  return problems;
}

/** One line per pair of near-duplicate descriptions, reported on the later skill. */
function collisions(loaded: readonly LoadedSkill[]): string[] {
  const problems: string[] = [];
  for (let i = 0; i < loaded.length; i++) {
    for (let j = i + 1; j < loaded.length; j++) {
      const a = (loaded[i] as LoadedSkill).skill;
      const b = (loaded[j] as LoadedSkill).skill;
      const similarity = descriptionSimilarity(a.description, b.description);
      if (similarity < COLLISION_THRESHOLD) continue;
      problems.push(
        problemLine(
          b.file,
          `description collides with ${a.name} (${a.file}): similarity ${similarity.toFixed(2)}, limit ${COLLISION_THRESHOLD}`,
          'the model picks a skill from its description alone: say what sets each apart, or merge the two',
        ),
      );
    }
  }
  return problems;
}
