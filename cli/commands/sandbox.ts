// `steward sandbox check`: one JSON object saying whether a fresh container runs, as whom, with
// which image and network. `steward sandbox image [full|tiny]`: builds a local image from Debian
// packages (scripts/build-sandbox-image.sh), never pulling one.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.ts';
import { UsageError } from '../../src/errors.ts';
import { checkSandbox } from '../../src/sandbox/check.ts';
import { sandboxClient } from '../../src/sandbox/client.ts';
import { parseCommandArgs } from '../args.ts';
import type { CliIo } from '../io.ts';

const BUILD_SCRIPT = fileURLToPath(new URL('../../scripts/build-sandbox-image.sh', import.meta.url));

export async function sandboxCommand(io: CliIo, argv: string[]): Promise<number> {
  const { positionals } = parseCommandArgs('sandbox', argv, {}, true);
  const [sub, ...rest] = positionals;
  if (sub === 'check' && rest.length === 0) {
    const { sandbox } = loadConfig(io.env, io.cwd);
    const report = await checkSandbox(sandboxClient(sandbox.socket), sandbox);
    io.stdout.write(`${JSON.stringify(report)}\n`);
    return report.ok ? 0 : 1;
  }
  if (
    sub === 'image' &&
    rest.length <= 1 &&
    (rest[0] === undefined || rest[0] === 'full' || rest[0] === 'tiny')
  ) {
    const { sandbox } = loadConfig(io.env, io.cwd);
    const kind = rest[0] ?? 'full';
    const tag = kind === 'full' ? sandbox.image : 'steward-sandbox-tiny:latest';
    return new Promise((done) => {
      const child = spawn('bash', [BUILD_SCRIPT, kind, tag], { stdio: ['ignore', 'inherit', 'inherit'] });
      child.once('error', () => done(1));
      child.once('close', (code) => done(code ?? 1));
    });
  }
  throw new UsageError(
    sub === undefined
      ? 'steward sandbox needs a subcommand: check or image'
      : `unknown sandbox subcommand '${positionals.join(' ')}'`,
  );
}
