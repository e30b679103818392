import type { Readable, Writable } from 'node:stream';
import type { Env } from '../src/config/load.ts';

/** What a command may touch of the outside world, passed in so tests can run commands in-process. */
export interface CliIo {
  env: Env;
  cwd: string;
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable;
  stderr: Writable;
}

export const processIo = (): CliIo => ({
  env: process.env,
  cwd: process.cwd(),
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
