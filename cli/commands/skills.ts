import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../../src/errors.ts';
import { loadSkills, validateSkills } from '../../src/skills/index.ts';
import { parseCommandArgs } from '../args.ts';
import type { CliIo } from '../io.ts';
import { SKILLS_SYNOPSIS as SYNOPSIS } from './synopses.ts';

/** `steward skills validate [DIR]`: exit 0 when clean, 1 with one line per problem, 2 on misuse. */
export async function skillsValidate(io: CliIo, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'validate') {
    throw new UsageError(
      sub === undefined
        ? `steward skills needs a subcommand: steward skills ${SYNOPSIS}`
        : `unknown subcommand '${sub}' for steward skills; use steward skills ${SYNOPSIS}`,
    );
  }
  const { positionals } = parseCommandArgs('skills validate', rest, {}, true);
  if (positionals.length > 1) {
    throw new UsageError(`steward skills validate takes one folder, not ${positionals.length}`);
  }
  const given = positionals[0] ?? 'skills';
  // Paths in problem lines read as the operator typed them; relative ones are taken from io.cwd.
  const dir = isAbsolute(given) || resolve(io.cwd) === process.cwd() ? given : resolve(io.cwd, given);
  const problems = validateSkills(dir);
  for (const problem of problems) io.stdout.write(`${problem}\n`);
  if (problems.length > 0) return 1;
  const count = loadSkills(dir).length;
  io.stdout.write(`${count} skill${count === 1 ? '' : 's'} valid in ${dir}\n`);
  return 0;
}
