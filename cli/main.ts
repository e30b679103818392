import { redact, secretValues } from '../src/config/secrets.ts';
import { ConfigError, exitCodeFor, StoreError, UsageError } from '../src/errors.ts';
import { COMMANDS } from './commands/index.ts';
import { type CliIo, processIo } from './io.ts';
import { packageVersion } from './version.ts';

export function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  return [
    'Usage: steward <command> [options]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Options:',
    '  -h, --help   show this help (also after a command)',
    '  --version    print the version',
    '',
    'Configuration comes from STEWARD_* environment variables and the optional file named by',
    'STEWARD_CONFIG; README.md lists them.',
  ].join('\n');
}

/** Runs one command and returns its exit status. Known failures print one line, never a stack. */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
      io.stdout.write(`${usage()}\n`);
      return name === undefined ? 2 : 0;
    }
    if (name === '--version') {
      io.stdout.write(`steward ${packageVersion()}\n`);
      return 0;
    }
    const command = COMMANDS[name];
    if (!command) throw new UsageError(`unknown command '${name}'`);
    const beforeDashes = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
    if (beforeDashes.includes('-h') || beforeDashes.includes('--help')) {
      io.stdout.write(
        `Usage: steward ${name}${command.synopsis ? ` ${command.synopsis}` : ''}\n${command.summary}\n`,
      );
      return 0;
    }
    return await command.run(io, rest);
  } catch (error) {
    const message = redact((error as Error).message ?? String(error), secretValues(io.env));
    if (error instanceof UsageError) {
      io.stderr.write(`steward: ${message}\n\n${usage()}\n`);
    } else if (error instanceof ConfigError || error instanceof StoreError) {
      io.stderr.write(`steward: ${message}\n`);
    } else {
      // A bug, not an operator mistake: keep it to one line, but say so.
      io.stderr.write(`steward: unexpected failure: ${message}\n`);
    }
    return exitCodeFor(error);
  }
}
