import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Skill } from '../../skills/types.ts';
import { type Tool, ToolInputError } from '../types.ts';

const MAX_NAME_LENGTH = 200;

/**
 * `load_skill {name}`: returns the body of an installed skill (or one of its reference files). The
 * bodies live in memory from startup; only the system prompt's one-line index costs tokens until
 * the model asks for one.
 */
export function createLoadSkillTool(skills: readonly Skill[]): Tool<{ name: string }> {
  const byName = new Map(skills.map((s) => [s.name, s]));
  const names = [...byName.keys()].sort();
  const example = names[0] ?? 'coding-task';
  return {
    name: 'load_skill',
    description: [
      'Loads a skill: the working discipline (rules, red flags, the evidence to gather) for one kind of',
      'task. The skills are listed one line each, "<name>: <description>", in the skills index of your',
      'instructions. Call this before you start a task that matches a skill\'s "Use when" trigger, then',
      'follow the returned rules for the rest of that task; load a skill once per task, not on every step,',
      'and do not load skills that do not match. Argument: name, the exact skill name from the index',
      '(lower-case words joined by hyphens). Returns the body as text. A body may end by listing',
      'reference files for detail; load one by passing "<skill>/references/<file>" as the name, exactly',
      'as listed. An unknown name is an error that lists the installed names.',
      names.length > 0 ? `Installed skills: ${names.join(', ')}.` : 'No skills are installed.',
      `Example call: {"name": "${example}"}.`,
    ].join(' '),
    inputSchema: {
      type: 'object',
      properties: {
        name: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_NAME_LENGTH,
          description: `A skill name from the skills index, e.g. "${example}", or "<skill>/references/<file>" for a reference file the skill lists.`,
        },
      },
      required: ['name'],
      additionalProperties: false,
    },
    trusted: true,
    async execute(args, ctx) {
      const requested = args.name.trim();
      const skill = byName.get(requested);
      if (skill) return withReferences(skill);
      const slash = requested.indexOf('/');
      const owner = slash > 0 ? byName.get(requested.slice(0, slash)) : undefined;
      if (owner) {
        const reference = requested.slice(slash + 1);
        // Only listed files: the name is matched exactly, never resolved as a path.
        if (owner.references.includes(reference)) {
          return await readFile(join(owner.dir, reference), { encoding: 'utf8', signal: ctx.signal });
        }
        throw new ToolInputError(
          owner.references.length > 0
            ? `Skill "${owner.name}" has no reference file "${reference}". Its reference files: ${owner.references.map((r) => `"${owner.name}/${r}"`).join(', ')}.`
            : `Skill "${owner.name}" has no reference files; load it with {"name": "${owner.name}"}.`,
        );
      }
      throw new ToolInputError(unknownSkill(requested, names));
    },
  };
}

function withReferences(skill: Skill): string {
  if (skill.references.length === 0) return skill.body;
  const list = skill.references.map((r) => `- ${skill.name}/${r}`).join('\n');
  return `${skill.body}\n\nReference files of this skill (load one with load_skill, passing the name as listed):\n${list}`;
}

function unknownSkill(requested: string, names: readonly string[]): string {
  if (names.length === 0) return `There is no skill named "${requested}": no skills are installed.`;
  const kebab = requested
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const guess = names.find((n) => n === kebab);
  const hint = guess ? ` Did you mean "${guess}"?` : '';
  return `There is no skill named "${requested}".${hint} Installed skills: ${names.join(', ')}. Pass one exactly as written.`;
}
