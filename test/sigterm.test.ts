// SIGTERM reaches a running turn: `steward chat` (a real child process) stops within the grace
// period during a model stream and during a long shell command, the command's process group is
// gone, and the next start completes the turn, reporting the cut-off call instead of running it.
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../src/limits.ts';
import { type ScriptedModel, startScriptedModel } from './support/scripted-model.ts';
import { tempDir } from './support/services.ts';
import { waitFor } from './support/telegram-emulator.ts';

const BIN = resolve(import.meta.dirname, '../bin/steward.js');
/**
 * The grace a stop gives running turns (Limits.stopGraceMs), plus slack for closing the database
 * and exiting on a busy machine.
 */
const EXIT_WITHIN_MS = DEFAULT_LIMITS.stopGraceMs + 15_000;

function chat(env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, 'chat'], {
    env: { PATH: process.env.PATH ?? '', HOME: env.STEWARD_DATA_DIR as string, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  }) as ChildProcessWithoutNullStreams;
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  return { child, output: () => out, exited };
}

const running = (pattern: string) => {
  try {
    return execFileSync('pgrep', ['-f', pattern]).toString().trim() !== '';
  } catch {
    return false;
  }
};

describe('SIGTERM during a turn', () => {
  let dir: ReturnType<typeof tempDir>;
  let model: ScriptedModel | undefined;
  afterEach(async () => {
    await model?.close();
    model = undefined;
    dir?.remove();
  });
  const envFor = (m: ScriptedModel) => {
    const workspace = join(dir.path, 'workspace');
    mkdirSync(workspace, { recursive: true });
    return {
      STEWARD_DATA_DIR: dir.path,
      STEWARD_WORKSPACE: workspace,
      STEWARD_MODEL_BASE_URL: m.baseUrl,
      STEWARD_MODEL: 'test-model',
    };
  };

  async function stopWithSigterm(run: ReturnType<typeof chat>) {
    const sent = Date.now();
    run.child.kill('SIGTERM');
    await run.exited;
    return Date.now() - sent;
  }

  it('stops a model stream, and the next start answers the same message once', async () => {
    dir = tempDir();
    model = await startScriptedModel([
      { chunks: ['Thinking'], hold: true },
      { chunks: ['Here is the answer.'] },
    ]);
    const first = chat(envFor(model));
    first.child.stdin.write('what is the answer?\n');
    await waitFor(
      () => model?.requests.length === 1 && first.output().includes('Thinking'),
      'the stream',
      30_000,
    );
    expect(await stopWithSigterm(first)).toBeLessThan(EXIT_WITHIN_MS);

    const second = chat(envFor(model));
    await waitFor(() => second.output().includes('Here is the answer.'), 'the resumed answer', 30_000);
    second.child.stdin.end();
    expect(await second.exited).toBe(0);
    expect(second.output()).toContain('Resuming a turn that a restart cut off.');
    expect(model.requests).toHaveLength(2);
    // The same question, asked once: the stopped step left nothing in the log.
    const asked = ((model.requests[1]?.messages ?? []) as Array<{ role: string; content: string }>).filter(
      (m) => m.role === 'user',
    );
    expect(asked.map((m) => m.content)).toEqual(['what is the answer?']);
  }, 90_000);

  it('kills a long shell command with its process group, and reports it after the restart', async () => {
    dir = tempDir();
    const marker = `sleep 47.${process.pid}`;
    model = await startScriptedModel([
      { chunks: [], toolCalls: [{ name: 'shell', argumentChunks: [JSON.stringify({ command: marker })] }] },
      { chunks: ['It was cut off.'] },
    ]);
    const first = chat(envFor(model));
    first.child.stdin.write('sleep a while\n');
    await waitFor(() => running(marker), 'the command to run', 30_000);
    expect(await stopWithSigterm(first)).toBeLessThan(EXIT_WITHIN_MS);
    await waitFor(() => !running(marker), 'the process group to be gone', 10_000);

    const second = chat(envFor(model));
    await waitFor(() => second.output().includes('It was cut off.'), 'the resumed answer', 30_000);
    second.child.stdin.end();
    expect(await second.exited).toBe(0);
    expect(running(marker)).toBe(false);
    expect(model.requests).toHaveLength(2);
    const last = ((model.requests[1]?.messages ?? []) as Array<{ role: string; content: string }>).at(-1);
    expect(last).toMatchObject({
      role: 'tool',
      content: expect.stringMatching(/^shell was interrupted by a restart and was not run again/),
    });
  }, 90_000);
});
