import { UsageError } from '../../src/errors.ts';
import { fence } from '../../src/trust/fence.ts';
import { parseCommandArgs } from '../args.ts';
import type { CliIo } from '../io.ts';

/** `steward fence --source NAME`: stdin, fenced exactly as an untrusted tool result reaches the model. */
export async function fenceCommand(io: CliIo, args: string[]): Promise<number> {
  const { values } = parseCommandArgs('fence', args, { source: { type: 'string' } });
  if (values.source === undefined || values.source.trim() === '') {
    throw new UsageError('--source NAME is required for steward fence (e.g. --source web_fetch)');
  }
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  // The model sees fence()'s text; stdout adds only the newline that ends its last line.
  io.stdout.write(`${fence(Buffer.concat(chunks).toString('utf8'), values.source)}\n`);
  return 0;
}
