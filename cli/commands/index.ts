import { parseCommandArgs } from '../args.ts';
import type { CliIo } from '../io.ts';
import { chatCommand } from './chat.ts';
import { doctorCommand } from './doctor.ts';
import { fenceEntry } from './fence.ts';
import { migrateCommand } from './migrate.ts';
import { netguardCommand } from './netguard.ts';
import { policyEntry } from './policy.ts';
import { sandboxEntry } from './sandbox.ts';
import { sandboxdCommand } from './sandboxd.ts';
import { skillsCommand } from './skills.ts';
import { startCommand } from './start.ts';

export interface Command {
  /** One line for the usage list. */
  summary: string;
  /** The argument synopsis after the command name, for `steward <command> --help`. */
  synopsis?: string;
  /** Parses its own arguments (with parseCommandArgs) and returns the exit status. */
  run(io: CliIo, args: string[]): Promise<number>;
}

const noArgs =
  (name: string, run: (io: CliIo) => Promise<number>) =>
  (io: CliIo, args: string[]): Promise<number> => {
    parseCommandArgs(name, args, {});
    return run(io);
  };

/** Every command of the CLI. Add a command by adding a line here. */
export const COMMANDS: Record<string, Command> = {
  start: { summary: 'run every configured channel (Telegram, Matrix)', run: noArgs('start', startCommand) },
  chat: {
    summary: 'talk here: each input line is a message from the owner; replies on stdout',
    run: noArgs('chat', chatCommand),
  },
  migrate: {
    summary: 'apply migrations/ to the configured database and exit',
    run: noArgs('migrate', migrateCommand),
  },
  doctor: {
    summary: 'check configuration, database, model endpoint and platform credentials',
    run: noArgs('doctor', doctorCommand),
  },
  skills: skillsCommand,
  fence: fenceEntry,
  netguard: netguardCommand,
  policy: policyEntry,
  sandboxd: {
    summary: 'run the sandbox daemon (the only holder of the Docker socket) until SIGTERM',
    run: noArgs('sandboxd', sandboxdCommand),
  },
  sandbox: sandboxEntry,
};
