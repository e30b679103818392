import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/errors.ts';
import { createLogger } from '../src/log.ts';
import {
  COLLISION_THRESHOLD,
  descriptionSimilarity,
  loadSkills,
  type Skill,
  skillIndex,
  validateSkills,
} from '../src/skills/index.ts';
import { createLoadSkillTool } from '../src/tools/builtin/load-skill.ts';
import { type ToolContext, ToolInputError } from '../src/tools/types.ts';
import { runSteward } from './support/run-steward.ts';
import { tempDir } from './support/services.ts';

const SEEDS = resolve(import.meta.dirname, '../skills');
const BODY = '# Rules\n\n- Keep the plan short.\n- Verify the result before reporting it.\n';
const DESCRIPTION = 'Does one careful thing. Use when the owner asks for that careful thing.';

let root: string;
let cleanup: () => void;
beforeEach(() => {
  const dir = tempDir('steward-skills-');
  root = dir.path;
  cleanup = dir.remove;
});
afterEach(() => cleanup());

/** Front matter with the given lines, then a blank line and the body (which starts on file line 6 for two keys). */
function skillText(frontMatter: string[], body = BODY): string {
  return ['---', ...frontMatter, '---', '', body].join('\n');
}

function writeSkill(folder: string, text: string): string {
  mkdirSync(join(root, folder), { recursive: true });
  const file = join(root, folder, 'SKILL.md');
  writeFileSync(file, text);
  return file;
}

/** A well-formed skill whose body (or description) can be swapped; its body starts on line 6. */
function goodSkill(name: string, opts: { description?: string; body?: string } = {}): string {
  return writeSkill(
    name,
    skillText([`name: ${name}`, `description: ${opts.description ?? DESCRIPTION}`], opts.body ?? BODY),
  );
}

function context(): ToolContext {
  return {
    signal: new AbortController().signal,
    sessionId: 'test-session',
    workspace: '/tmp',
    log: createLogger('silent', []),
    now: () => new Date('2025-01-01T00:00:00Z'),
  };
}

async function inputError(run: () => unknown): Promise<ToolInputError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(ToolInputError);
    return error as ToolInputError;
  }
  throw new Error('expected a ToolInputError, but nothing was thrown');
}

describe('loadSkills', () => {
  it('reads name, one-line description, trimmed body and references; ignores plain files and dot-folders', () => {
    goodSkill('beta');
    const alpha = writeSkill(
      'alpha',
      skillText(
        ['name: alpha', 'description: >-', '  First line', '  continues here. Use when testing.'],
        BODY,
      ),
    );
    mkdirSync(join(root, 'alpha', 'references', 'deep'), { recursive: true });
    writeFileSync(join(root, 'alpha', 'references', 'testing.md'), 'Test detail.\n');
    writeFileSync(join(root, 'alpha', 'references', 'deep', 'more.md'), 'More detail.\n');
    writeFileSync(join(root, 'README.md'), '# not a skill\n');
    mkdirSync(join(root, '.cache'));

    const skills = loadSkills(root);
    expect(skills.map((s) => s.name)).toEqual(['alpha', 'beta']);
    expect(skills[0]).toEqual({
      name: 'alpha',
      description: 'First line continues here. Use when testing.',
      body: BODY.trimEnd(),
      file: alpha,
      dir: join(root, 'alpha'),
      references: ['references/deep/more.md', 'references/testing.md'],
    });
    expect(skills[1]?.references).toEqual([]);
  });

  it('accepts CRLF line endings and a byte-order mark', () => {
    writeSkill(
      'crlf',
      `\uFEFF${skillText(['name: crlf', `description: ${DESCRIPTION}`]).replace(/\n/g, '\r\n')}`,
    );
    const [skill] = loadSkills(root);
    expect(skill?.name).toBe('crlf');
    expect(skill?.body).toBe(BODY.trimEnd());
    expect(validateSkills(root)).toEqual([]);
  });

  it('refuses a skill that cannot load, naming the file and pointing at the validator', () => {
    goodSkill('fine');
    const file = writeSkill('broken', skillText(['name: broken']));
    expect(() => loadSkills(root)).toThrow(ConfigError);
    expect(() => loadSkills(root)).toThrow(
      `${file}: front matter has no description; add "description: <what the skill is for>. Use when <the situations that call for it>."; steward skills validate ${root} lists every problem`,
    );
  });

  it('names a missing folder in a ConfigError, from the loader and the validator alike', () => {
    const missing = join(root, 'nope');
    const message = `skills folder ${missing} does not exist; create it, or name the folder that holds the skill packs`;
    expect(() => loadSkills(missing)).toThrow(new ConfigError(message));
    expect(() => validateSkills(missing)).toThrow(new ConfigError(message));
    writeFileSync(join(root, 'file'), '');
    expect(() => validateSkills(join(root, 'file'))).toThrow(/is not a folder/);
  });

  it('an empty folder holds no skills and no problems', () => {
    expect(loadSkills(root)).toEqual([]);
    expect(validateSkills(root)).toEqual([]);
  });
});

describe('validateSkills: one exact line per problem, naming the file and the fix', () => {
  it('a clean skill has no problems', () => {
    goodSkill('clean');
    expect(validateSkills(root)).toEqual([]);
  });

  const cases: Array<[string, () => string]> = [
    [
      'a folder without SKILL.md',
      () => {
        mkdirSync(join(root, 'lonely'));
        return `${join(root, 'lonely')}: no SKILL.md in this skill folder; add SKILL.md with front matter name and description, or remove the folder`;
      },
    ],
    [
      'no front matter',
      () => {
        const file = writeSkill('bare', BODY);
        return `${file} line 1: no front matter (the file must start with a "---" line); begin the file with the lines "---", "name: <folder name>", "description: … Use when …", "---"`;
      },
    ],
    [
      'front matter never closed',
      () => {
        const file = writeSkill('open', `---\nname: open\ndescription: ${DESCRIPTION}\n\n${BODY}`);
        return `${file} line 1: front matter is never closed; add a "---" line after the description, before the body`;
      },
    ],
    [
      'front matter that is not valid YAML',
      () => {
        const file = writeSkill('yaml', skillText(['name: yaml', 'description: Plan: Use when x.']));
        return `${file} line 3: front matter is not valid YAML (Nested mappings are not allowed in compact mappings); fix the YAML; quote a value that contains ": " or starts with a special character`;
      },
    ],
    [
      'front matter that is not a mapping',
      () => {
        const file = writeSkill('listed', skillText(['- name', '- description']));
        return `${file} line 2: front matter is not a mapping of keys; write it as "name: <folder name>" and "description: … Use when …" lines`;
      },
    ],
    [
      'a missing name',
      () => {
        const file = writeSkill('nameless', skillText([`description: ${DESCRIPTION}`]));
        return `${file}: front matter has no name; add "name: nameless" (the folder name)`;
      },
    ],
    [
      'a missing description',
      () => {
        const file = writeSkill('mute', skillText(['name: mute']));
        return `${file}: front matter has no description; add "description: <what the skill is for>. Use when <the situations that call for it>."`;
      },
    ],
    [
      'a name that differs from its folder',
      () => {
        const file = writeSkill(
          'folder-name',
          skillText(['name: other-name', `description: ${DESCRIPTION}`]),
        );
        return `${file}: name "other-name" does not match its folder "folder-name"; set "name: folder-name", or rename the folder to match`;
      },
    ],
    [
      'a folder name that is not kebab-case',
      () => {
        const file = writeSkill(
          'Trip_Planner',
          skillText(['name: Trip_Planner', `description: ${DESCRIPTION}`]),
        );
        return `${file}: folder "Trip_Planner" is not a kebab-case skill name; rename the folder to "trip-planner" and set "name: trip-planner" (lower-case letters, digits, single hyphens)`;
      },
    ],
    [
      'an unknown front matter key',
      () => {
        const file = writeSkill(
          'extra',
          skillText(['name: extra', `description: ${DESCRIPTION}`, 'version: 2']),
        );
        return `${file}: unknown front matter key "version"; remove it; only name and description are read`;
      },
    ],
    [
      'a description without a "Use when" trigger',
      () => {
        const file = goodSkill('vague', { description: 'Helps with coding tasks of all kinds.' });
        return `${file}: description has no "Use when …" trigger; end the description with "Use when <the situations that call for this skill>."`;
      },
    ],
    [
      'an overlong description',
      () => {
        const description = `${'Many words here. '.repeat(20)}Use when testing.`;
        const file = goodSkill('wordy', { description });
        return `${file}: description is ${description.trim().length} characters (limit 300); shorten it to what the skill is for and when to use it; detail belongs in the body`;
      },
    ],
    [
      'an empty body',
      () => {
        const file = goodSkill('hollow', { body: '\n\n' });
        return `${file}: the body is empty; write the principles of the skill after the front matter`;
      },
    ],
    [
      'a body over 500 lines',
      () => {
        const body = `# Rules\n\n${Array.from({ length: 499 }, (_, i) => `- Rule ${i + 1}.`).join('\n')}`;
        const file = goodSkill('huge', { body });
        return `${file}: the body is 501 lines (limit 500); move detail into references/<topic>.md files and keep the core principles in SKILL.md`;
      },
    ],
    [
      'a section heading outside the allowed set',
      () => {
        const file = goodSkill('sections', { body: `${BODY}\n## Background\n\nSome history.\n` });
        return `${file} line 11: section "Background" is not one of the allowed sections; use only Principles, Rules, Process, Output format, Anti-rationalization, Red flags, Evidence required, References (### sub-headings are free)`;
      },
    ],
  ];

  it.each(cases)('%s', (_name, arrange) => {
    const expected = arrange();
    expect(validateSkills(root)).toEqual([expected]);
  });

  const FIX = 'skills are principles only: state the rule the example shows, then delete the example';
  const examples: Array<[string, string, number, string]> = [
    ['an "Examples" heading', `${BODY}\n## Examples\n\n- Fix the bug.\n`, 11, 'heading "Examples"'],
    ['an "Example 1" sub-heading', `${BODY}\n### Example 1\n\nFix the bug.\n`, 11, 'heading "Example 1"'],
    [
      'a labelled example line',
      `${BODY}- **Example 2:** the owner asks for a refund.\n`,
      10,
      'labelled example "Example 2: the owner asks for a refund."',
    ],
    [
      'an Input/Output pair',
      `${BODY}\nInput: three tickers\nOutput: a table of closes\n`,
      11,
      'sample exchange ("Input:" then "Output:")',
    ],
    [
      'a User/Assistant transcript',
      `${BODY}\n> **User:** book me a train\n> **Assistant:** Which day?\n`,
      11,
      'sample exchange ("User:" then "Assistant:")',
    ],
    ['a Q/A pair', `${BODY}\nQ: Is it safe?\n\nA: Yes, because…\n`, 11, 'sample exchange ("Q:" then "A:")'],
    [
      'a fenced sample dialogue',
      `${BODY}\n\`\`\`\nuser: plan my week\nassistant: Sure, first…\n\`\`\`\n`,
      11,
      'code block holding a sample dialogue',
    ],
    [
      'a fenced chat-format message list',
      `${BODY}\n\`\`\`json\n[{"role": "user", "content": "hi"}]\n\`\`\`\n`,
      11,
      'code block holding a sample dialogue',
    ],
    [
      'a code block marked as a transcript',
      `${BODY}\n~~~transcript\nhello\n~~~\n`,
      11,
      'code block marked "transcript"',
    ],
  ];

  it.each(examples)('worked examples: %s', (_name, body, line, what) => {
    const file = goodSkill('shots', { body });
    expect(validateSkills(root)).toEqual([
      `${file} line ${line}: worked example in the body (${what}); ${FIX}`,
    ]);
  });

  it('an example dump is one line naming the first example and the other lines', () => {
    const body = [
      '# Rules',
      '',
      '- Answer briefly.',
      '',
      '## Example 1',
      '',
      'User: what time is it in Tokyo?',
      'Assistant: It is 09:00 JST.',
      '',
      '## Example 2',
      '',
      'User: and in Paris?',
      'Assistant: 02:00 CET.',
    ].join('\n');
    const file = goodSkill('dump', { body });
    expect(validateSkills(root)).toEqual([
      `${file} line 10: worked example in the body (heading "Example 1", also at lines 12, 15, 17); ${FIX}`,
    ]);
  });

  it('principles that merely mention examples, labels or code pass', () => {
    const body = [
      '# Principles',
      '',
      '- For example, a bug report needs a failing test first.',
      '- Examples, anecdotes and stories are not evidence; sources are.',
      '- Output: one digest per run, short lines.',
      '- The user asks; you answer from sources.',
      '',
      '# Process',
      '',
      '1. Run the tests:',
      '',
      '```sh',
      'npx vitest run',
      '# a shell comment is not a heading',
      '```',
      '',
      '### Before you start',
      '',
      '- Read the code first.',
      '',
      '## Anti-rationalization',
      '',
      '- "Just this once" is how it starts.',
      '',
      '## Red flags:',
      '',
      '- No test.',
      '',
      '## evidence required',
      '',
      '- The command output.',
    ].join('\n');
    goodSkill('careful', { body });
    expect(validateSkills(root)).toEqual([]);
  });

  it('reports the problems of every skill, each skill on its own lines', () => {
    const vague = goodSkill('vague', { description: 'Does things.' });
    const bare = writeSkill('bare', BODY);
    goodSkill('good');
    expect(validateSkills(root)).toEqual([
      expect.stringMatching(new RegExp(`^${bare} line 1: no front matter`)),
      expect.stringMatching(new RegExp(`^${vague}: description has no "Use when …" trigger`)),
    ]);
  });
});

describe('colliding descriptions', () => {
  const CODING = 'Plan first, test first, verify end to end. Use when you are asked to build or modify code.';
  const CODING_COPY = 'Plan-first, test-first, verify end-to-end. Use when asked to build or change code.';
  const RESEARCH =
    'Answer a question from sources you read, each claim cited. Use when asked to research or summarise a topic.';
  const FACT_CHECK =
    'Check one specific claim against primary sources and rate it. Use when asked whether a quote or statistic is true.';

  it('near-duplicates score above the threshold; related but distinct skills score well below it', () => {
    expect(descriptionSimilarity(CODING, CODING)).toBe(1);
    expect(descriptionSimilarity(CODING, CODING_COPY)).toBeGreaterThanOrEqual(COLLISION_THRESHOLD);
    expect(descriptionSimilarity(RESEARCH, FACT_CHECK)).toBeLessThan(0.35);
    expect(descriptionSimilarity(CODING, RESEARCH)).toBeLessThan(0.1);
  });

  it('flags a near-duplicate pair once, on the later skill, naming both files', () => {
    const first = goodSkill('build-code', { description: CODING });
    const second = goodSkill('write-code', { description: CODING_COPY });
    const score = descriptionSimilarity(CODING, CODING_COPY).toFixed(2);
    expect(validateSkills(root)).toEqual([
      `${second}: description collides with build-code (${first}): similarity ${score}, limit 0.6; the model picks a skill from its description alone: say what sets each apart, or merge the two`,
    ]);
  });

  it('does not flag two distinct skills of the same field', () => {
    goodSkill('research', { description: RESEARCH });
    goodSkill('fact-check', { description: FACT_CHECK });
    expect(validateSkills(root)).toEqual([]);
  });
});

describe('the seed skills', () => {
  it('are the four disciplines, and validate clean', () => {
    expect(validateSkills(SEEDS)).toEqual([]);
    const skills = loadSkills(SEEDS);
    expect(skills.map((s) => s.name)).toEqual([
      'coding-task',
      'markets-digest',
      'research-brief',
      'travel-planning',
    ]);
    for (const skill of skills) {
      expect(skill.description).toMatch(/Use when /);
      expect(skill.body.split('\n').length).toBeGreaterThan(20);
    }
  });

  it('are far apart from each other', () => {
    const skills = loadSkills(SEEDS);
    for (const a of skills) {
      for (const b of skills) {
        if (a.name < b.name) expect(descriptionSimilarity(a.description, b.description)).toBeLessThan(0.1);
      }
    }
  });
});

describe('skillIndex', () => {
  it('is one line per skill, name and description, sorted, with nothing of any body', () => {
    const skills = loadSkills(SEEDS);
    const index = skillIndex([...skills].reverse());
    const lines = index.split('\n');
    expect(lines).toHaveLength(skills.length);
    expect(lines).toEqual(skills.map((s) => `- ${s.name}: ${s.description}`));
    for (const skill of skills) {
      for (const line of skill.body.split('\n').filter((l) => l.trim().length > 20)) {
        expect(index).not.toContain(line.trim());
      }
    }
    expect(skillIndex([])).toBe('');
  });
});

describe('load_skill', () => {
  const skills = (): Skill[] => {
    goodSkill('alpha-skill', { body: '# Rules\n\n- Alpha rule one.\n' });
    goodSkill('beta', { description: 'Something else entirely. Use when beta applies.' });
    mkdirSync(join(root, 'beta', 'references'));
    writeFileSync(join(root, 'beta', 'references', 'detail.md'), 'Beta detail.\n');
    return loadSkills(root);
  };

  it('is trusted, with a strict schema and a description naming the installed skills', () => {
    const tool = createLoadSkillTool(skills());
    expect(tool.name).toBe('load_skill');
    expect(tool.trusted).toBe(true);
    expect(tool.inputSchema.additionalProperties).toBe(false);
    const validate = new Ajv({ strict: true, allErrors: true }).compile(tool.inputSchema);
    expect(validate({ name: 'beta' })).toBe(true);
    expect(validate({})).toBe(false);
    expect(validate({ name: 'beta', extra: 1 })).toBe(false);
    expect(validate({ name: '' })).toBe(false);
    expect(tool.description).toContain('Installed skills: alpha-skill, beta.');
    expect(tool.description).toContain('Use when');
    expect(tool.description).toContain('Example call: {"name": "alpha-skill"}');
  });

  it('returns the body of a named skill', async () => {
    const tool = createLoadSkillTool(skills());
    expect(await tool.execute({ name: 'alpha-skill' }, context())).toBe('# Rules\n\n- Alpha rule one.');
  });

  it('lists reference files after the body and returns one when asked by its listed name', async () => {
    const tool = createLoadSkillTool(skills());
    const body = await tool.execute({ name: 'beta' }, context());
    expect(body).toBe(
      `${BODY.trimEnd()}\n\nReference files of this skill (load one with load_skill, passing the name as listed):\n- beta/references/detail.md`,
    );
    expect(await tool.execute({ name: 'beta/references/detail.md' }, context())).toBe('Beta detail.\n');
    const wrong = await inputError(() => tool.execute({ name: 'beta/references/../SKILL.md' }, context()));
    expect(wrong.message).toBe(
      'Skill "beta" has no reference file "references/../SKILL.md". Its reference files: "beta/references/detail.md".',
    );
    const none = await inputError(() => tool.execute({ name: 'alpha-skill/references/x.md' }, context()));
    expect(none.message).toBe(
      'Skill "alpha-skill" has no reference files; load it with {"name": "alpha-skill"}.',
    );
  });

  it('corrects an unknown name with the installed names, and a near miss with a suggestion', async () => {
    const tool = createLoadSkillTool(skills());
    const unknown = await inputError(() => tool.execute({ name: 'gamma' }, context()));
    expect(unknown.message).toBe(
      'There is no skill named "gamma". Installed skills: alpha-skill, beta. Pass one exactly as written.',
    );
    const near = await inputError(() => tool.execute({ name: 'Alpha_Skill' }, context()));
    expect(near.message).toBe(
      'There is no skill named "Alpha_Skill". Did you mean "alpha-skill"? Installed skills: alpha-skill, beta. Pass one exactly as written.',
    );
    const empty = createLoadSkillTool([]);
    expect(empty.description).toContain('No skills are installed.');
    const nothing = await inputError(() => empty.execute({ name: 'x' }, context()));
    expect(nothing.message).toBe('There is no skill named "x": no skills are installed.');
  });

  it('loads every seed skill body in full', async () => {
    const seeds = loadSkills(SEEDS);
    const tool = createLoadSkillTool(seeds);
    for (const skill of seeds) expect(await tool.execute({ name: skill.name }, context())).toBe(skill.body);
  });
});

describe('steward skills validate', () => {
  it('exits 0 with one line for a clean folder, the default being skills/ under the working directory', async () => {
    goodSkill('one');
    goodSkill('two', { description: 'A different duty altogether. Use when the second case comes up.' });
    const run = await runSteward(['skills', 'validate', root]);
    expect(run).toEqual({ code: 0, stdout: `2 skills valid in ${root}\n`, stderr: '' });

    const seeds = await runSteward(['skills', 'validate'], { cwd: resolve(SEEDS, '..') });
    expect(seeds).toEqual({ code: 0, stdout: '4 skills valid in skills\n', stderr: '' });
  });

  it('exits 1 with one line per problem', async () => {
    const vague = goodSkill('vague', { description: 'Does things.' });
    const shots = goodSkill('shots', { body: `${BODY}\n## Examples\n\n- One.\n` });
    goodSkill('fine', { description: 'A different duty altogether. Use when the second case comes up.' });
    const run = await runSteward(['skills', 'validate', root]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('');
    expect(run.stdout.split('\n').filter(Boolean)).toEqual([
      `${shots} line 11: worked example in the body (heading "Examples"); skills are principles only: state the rule the example shows, then delete the example`,
      `${vague}: description has no "Use when …" trigger; end the description with "Use when <the situations that call for this skill>."`,
    ]);
  });

  it('exits 2 with one line naming a missing folder', async () => {
    const missing = join(root, 'absent');
    const run = await runSteward(['skills', 'validate', missing]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `steward: skills folder ${missing} does not exist; create it, or name the folder that holds the skill packs\n`,
    );
  });

  it('exits 2 with usage on a wrong subcommand, an unknown option or two folders', async () => {
    for (const args of [
      ['skills'],
      ['skills', 'check'],
      ['skills', 'validate', '--fix'],
      ['skills', 'validate', 'a', 'b'],
    ]) {
      const run = await runSteward(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toContain('Usage: steward <command>');
    }
    const sub = await runSteward(['skills', 'check']);
    expect(sub.stderr.split('\n')[0]).toBe(
      "steward: unknown subcommand 'check' for steward skills; use steward skills validate [DIR]",
    );
    const help = await runSteward(['skills', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.split('\n')[0]).toBe('Usage: steward skills validate [DIR]');
  });
});
