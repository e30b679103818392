import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../src/errors.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Strict parsing for one command; anything unknown is a UsageError (usage printed, exit 2). */
export function parseCommandArgs<O extends Options>(
  command: string,
  args: string[],
  options: O,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (error) {
    const word = /'([^']+)'/.exec((error as Error).message)?.[1] ?? '';
    const code = (error as { code?: string }).code;
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw new UsageError(`unknown argument '${word}' for steward ${command}`);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      throw new UsageError(`steward ${command}: ${(error as Error).message.split('\n')[0]}`);
    }
    throw new UsageError(`unknown option '${word}' for steward ${command}`);
  }
}
