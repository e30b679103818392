// bin/steward.js is both a shell script and a module. Run as a program (as `npx steward` and the
// bin link run it), its shell line starts Node with the long-running commands' heap flags, so
// `start` does not boot Node a second time to get them; run by `node`, it replaces itself once.
import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from './support/services.ts';

const BIN = resolve(import.meta.dirname, '../bin/steward.js');
const run = promisify(execFile);

/** The start-up marks steward writes on stderr, by stage name. */
async function marks(file: string, args: string[]) {
  const dir = tempDir();
  try {
    const result = await run(file, args, {
      env: {
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        HOME: dir.path,
        STEWARD_DATA_DIR: dir.path,
        STEWARD_DEBUG_TIMING: '1',
      },
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    const stages = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('steward timing: '))
      .map((line) => line.split(' ').slice(3).join(' '));
    return { code: 'code' in result ? result.code : 0, stages, stderr: result.stderr };
  } finally {
    dir.remove();
  }
}

describe('the launcher', () => {
  it('run as a program, starts a long-running command with the heap flags and no second boot', async () => {
    const { code, stages, stderr } = await marks(BIN, ['start']);
    expect(code, stderr).toBe(2);
    expect(stderr).toContain('no channel is configured');
    expect(stages.filter((s) => s.startsWith('node ready'))).toEqual(['node ready (with the heap flags)']);
  });

  it('run by node, replaces itself once to get them', async () => {
    const { code, stages } = await marks(process.execPath, [BIN, 'start']);
    expect(code).toBe(2);
    expect(stages.filter((s) => s.startsWith('node ready'))).toEqual([
      'node ready',
      'node ready (with the heap flags)',
    ]);
  });

  it('a short command runs without them', async () => {
    const { code, stages, stderr } = await marks(BIN, ['policy', 'check', '--', 'ls']);
    expect(code, stderr).toBe(0);
    expect(stages.filter((s) => s.startsWith('node ready'))).toEqual(['node ready']);
    // The shell line itself says nothing (it needs only /bin/sh and /usr/bin/env).
    expect(stderr.split('\n').filter((line) => line && !line.startsWith('steward timing: '))).toEqual([]);
  });
});
