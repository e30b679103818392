import { parseCommandArgs } from '../args.ts';
import type { CliIo } from '../io.ts';
import { MCP_SYNOPSIS, SKILLS_SYNOPSIS } from './synopses.ts';

export interface Command {
  /** One line for the usage list. */
  summary: string;
  /** The argument synopsis after the command name, for `steward <command> --help`. */
  synopsis?: string;
  /** Parses its own arguments (with parseCommandArgs) and returns the exit status. */
  run(io: CliIo, args: string[]): Promise<number>;
}

type Run = (io: CliIo, args: string[]) => Promise<number>;

/**
 * A command whose module loads only when it runs: `policy check` never loads the database
 * drivers, `start` never loads the console, and the usage list loads none of them.
 */
const lazy = (summary: string, load: () => Promise<Run>, synopsis?: string): Command => ({
  summary,
  ...(synopsis ? { synopsis } : {}),
  run: async (io, args) => (await load())(io, args),
});

const noArgs =
  (name: string, run: (io: CliIo) => Promise<number>): Run =>
  (io, args) => {
    parseCommandArgs(name, args, {});
    return run(io);
  };

/** Every command of the CLI. Add a command by adding a line here. */
export const COMMANDS: Record<string, Command> = {
  start: lazy('run every configured channel (Telegram, Matrix)', async () =>
    noArgs('start', (await import('./start.ts')).startCommand),
  ),
  chat: lazy('talk here: each input line is a message from the owner; replies on stdout', async () =>
    noArgs('chat', (await import('./chat.ts')).chatCommand),
  ),
  migrate: lazy('apply migrations/ to the configured database and exit', async () =>
    noArgs('migrate', (await import('./migrate.ts')).migrateCommand),
  ),
  doctor: lazy('check configuration, database, model endpoint and platform credentials', async () =>
    noArgs('doctor', (await import('./doctor.ts')).doctorCommand),
  ),
  skills: lazy(
    'validate skill packs: steward skills validate [DIR] (default skills/)',
    async () => (await import('./skills.ts')).skillsValidate,
    SKILLS_SYNOPSIS,
  ),
  fence: lazy(
    'print stdin fenced as untrusted data, exactly as the model would see it',
    async () => (await import('./fence.ts')).fenceCommand,
    '--source NAME',
  ),
  netguard: lazy(
    'judge a URL as web_fetch would, fetching nothing (exit 0 allow, 1 block)',
    async () => (await import('./netguard.ts')).netguardCommand,
    'check [--resolve HOST=ADDR]... URL\n' +
      'Prints one JSON object {"verdict":"allow"|"block","reason":...,"addresses":[...]}.\n' +
      '--resolve answers the lookup of HOST with ADDR (repeat it for several answers), like curl.\n' +
      'Exit status: 0 allow, 1 block, 2 usage error.',
  ),
  policy: lazy(
    'judge shell commands as the permission chain would (check -- COMMAND, or check --lines)',
    async () => (await import('./policy.ts')).policyCommand,
    'check [--workspace DIR] -- COMMAND | check --lines [--workspace DIR] < FILE',
  ),
  sandboxd: lazy('run the sandbox daemon (the only holder of the Docker socket) until SIGTERM', async () =>
    noArgs('sandboxd', (await import('./sandboxd.ts')).sandboxdCommand),
  ),
  sandbox: lazy(
    'check the sandbox (a fresh container through sandboxd) or build a local image',
    async () => (await import('./sandbox.ts')).sandboxCommand,
    'check | image [full|tiny]',
  ),
  mcp: lazy(
    'MCP servers: steward mcp list [--tools] [--json] (name, transport, state, tools, trust)',
    async () => (await import('./mcp.ts')).mcpList,
    MCP_SYNOPSIS,
  ),
};
