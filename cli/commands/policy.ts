// `steward policy check`: how the permission chain judges a shell command with no grants, as one
// JSON object per command, so an operator can audit a shell history line by line.
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../../src/config/load.ts';
import { UsageError } from '../../src/errors.ts';
import { judgeShell } from '../../src/permissions/judge-shell.ts';
import { parseCommandArgs } from '../args.ts';
import type { CliIo } from '../io.ts';

/** One line of JSON with exactly the contract's fields, in order. */
function report(command: string, workspace: string): string {
  const v = judgeShell(command, workspace);
  return JSON.stringify({ verdict: v.verdict, layer: v.layer, score: v.score, rationale: v.rationale });
}

export async function policyCommand(io: CliIo, argv: string[]): Promise<number> {
  const dashes = argv.indexOf('--');
  const before = dashes < 0 ? argv : argv.slice(0, dashes);
  const { values, positionals } = parseCommandArgs(
    'policy',
    before,
    { workspace: { type: 'string' }, lines: { type: 'boolean' } },
    true,
  );
  const [sub, ...rest] = positionals;
  if (sub !== 'check') {
    throw new UsageError(
      sub === undefined ? 'steward policy needs a subcommand: check' : `unknown policy subcommand '${sub}'`,
    );
  }
  // The workspace: --workspace, else the configured one (STEWARD_WORKSPACE, the config file, or
  // $STEWARD_DATA_DIR/workspace). No model or channel settings are needed for this.
  const workspace = values.workspace
    ? resolve(io.cwd, values.workspace)
    : loadConfig(io.env, io.cwd).workspace;
  const words = dashes < 0 ? rest : [...rest, ...argv.slice(dashes + 1)];

  if (values.lines) {
    if (words.length > 0)
      throw new UsageError('steward policy check --lines reads commands from stdin, not arguments');
    const lines = createInterface({ input: io.stdin, crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) io.stdout.write(`${report(line.replace(/\r$/, ''), workspace)}\n`);
    return 0;
  }
  if (words.length === 0) throw new UsageError('steward policy check needs a command after --');
  io.stdout.write(`${report(words.join(' '), workspace)}\n`);
  return 0;
}
