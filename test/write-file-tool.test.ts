import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { link, mkdir, mkdtemp, readdir, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';
import { createWriteFileTool, type WriteFileArgs, writeFileTool } from '../src/tools/builtin/write-file.ts';
import { type ToolContext, ToolInputError } from '../src/tools/types.ts';

let root: string;
let workspace: string;
let outside: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'steward-write-'));
  workspace = join(root, 'workspace');
  outside = join(root, 'outside');
  await mkdir(workspace);
  await mkdir(outside);
  await writeFile(join(outside, 'victim.txt'), 'original');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function context(ws = workspace): ToolContext {
  return {
    signal: new AbortController().signal,
    sessionId: 'test-session',
    workspace: ws,
    log: createLogger('silent', []),
    now: () => new Date(),
  };
}

async function write(args: WriteFileArgs, ctx = context()): Promise<string> {
  const output = await writeFileTool.execute(args, ctx);
  if (typeof output !== 'string') throw new Error('write_file should return plain text');
  return output;
}

async function refusal(args: WriteFileArgs): Promise<string> {
  try {
    await write(args);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolInputError);
    return (error as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(args.path)} to be refused`);
}

/** Nothing outside the workspace changed. */
async function outsideUntouched(): Promise<void> {
  expect(await readdir(outside)).toEqual(['victim.txt']);
  expect(await readFile(join(outside, 'victim.txt'), 'utf8')).toBe('original');
}

describe('write_file: writes inside the workspace', () => {
  it('creates a new file and reports bytes and the relative path', async () => {
    expect(await write({ path: 'notes.md', content: 'hello\n' })).toBe(
      'Wrote 6 bytes to notes.md (new file).',
    );
    expect(readFileSync(join(workspace, 'notes.md'), 'utf8')).toBe('hello\n');
  });

  it('creates nested missing folders inside the workspace', async () => {
    const result = await write({ path: 'a/b/c/deep.txt', content: 'x' });
    expect(result).toBe('Wrote 1 bytes to a/b/c/deep.txt (new file; created folders a, a/b, a/b/c).');
    expect(readFileSync(join(workspace, 'a/b/c/deep.txt'), 'utf8')).toBe('x');
  });

  it('overwrites a normal file, shrinking it', async () => {
    await writeFile(join(workspace, 'f.txt'), 'a much longer previous content');
    const result = await write({ path: 'f.txt', content: 'short' });
    expect(result).toBe('Wrote 5 bytes to f.txt (replaced the previous 30 bytes).');
    expect(readFileSync(join(workspace, 'f.txt'), 'utf8')).toBe('short');
  });

  it('counts UTF-8 bytes and accepts unicode names', async () => {
    const result = await write({ path: 'Notizen/über café 日本.md', content: 'ünï 😀' });
    expect(result).toBe('Wrote 10 bytes to Notizen/über café 日本.md (new file; created folder Notizen).');
    expect(readFileSync(join(workspace, 'Notizen', 'über café 日本.md'), 'utf8')).toBe('ünï 😀');
  });

  it('writes an empty file', async () => {
    expect(await write({ path: 'empty', content: '' })).toBe('Wrote 0 bytes to empty (new file).');
    expect(readFileSync(join(workspace, 'empty'), 'utf8')).toBe('');
  });

  it('accepts an absolute path inside the workspace and ./ segments', async () => {
    expect(await write({ path: join(workspace, 'abs.txt'), content: '1' })).toBe(
      'Wrote 1 bytes to abs.txt (new file).',
    );
    expect(await write({ path: './sub//./x.txt', content: '2' })).toMatch(/to sub\/x\.txt /);
  });

  it('creates a missing workspace', async () => {
    const fresh = join(root, 'fresh', 'ws');
    await writeFileTool.execute({ path: 'n.txt', content: 'ok' }, context(fresh));
    expect(readFileSync(join(fresh, 'n.txt'), 'utf8')).toBe('ok');
  });

  it('follows a symlinked folder whose real target stays inside the workspace', async () => {
    await mkdir(join(workspace, 'real'));
    await symlink(join(workspace, 'real'), join(workspace, 'alias'));
    await write({ path: 'alias/in.txt', content: 'ok' });
    expect(readFileSync(join(workspace, 'real', 'in.txt'), 'utf8')).toBe('ok');
  });

  it('works when the workspace itself is reached through a symlink', async () => {
    const linked = join(root, 'ws-link');
    await symlink(workspace, linked);
    await writeFileTool.execute({ path: 'via.txt', content: 'ok' }, context(linked));
    await writeFileTool.execute({ path: join(linked, 'abs.txt'), content: 'ok' }, context(linked));
    expect(readFileSync(join(workspace, 'via.txt'), 'utf8')).toBe('ok');
    expect(readFileSync(join(workspace, 'abs.txt'), 'utf8')).toBe('ok');
  });
});

describe('write_file: hostile paths are refused and nothing outside changes', () => {
  const cases: Array<[string, () => Promise<string>, RegExp]> = [
    ['../ escape', async () => '../outside/victim.txt', /"\.\."/],
    ['deep ../ escape', async () => 'a/../../outside/victim.txt', /"\.\."/],
    ['harmless-looking .. inside', async () => 'a/../b.txt', /"\.\."/],
    ['absolute path outside', async () => join(outside, 'victim.txt'), /outside the workspace/],
    ['absolute system path', async () => '/etc/passwd', /outside the workspace/],
    ['absolute path with .. climbing out', async () => `${workspace}/../outside/victim.txt`, /"\.\."/],
    ['absolute path with .. staying inside', async () => `${workspace}/a/../b.txt`, /"\.\."/],
    ['a ~ path', async () => '~/.bashrc', /"~" is not expanded/],
    [
      'symlinked parent folder pointing outside',
      async () => {
        await symlink(outside, join(workspace, 'out'));
        return 'out/victim.txt';
      },
      /symbolic link that leads outside/,
    ],
    [
      'symlinked parent deeper in the path',
      async () => {
        await mkdir(join(workspace, 'a'));
        await symlink(outside, join(workspace, 'a', 'b'));
        return 'a/b/new/file.txt';
      },
      /"a\/b" is a symbolic link that leads outside/,
    ],
    [
      'relative symlink chain pointing outside',
      async () => {
        await symlink('../outside', join(workspace, 'rel'));
        await symlink('rel', join(workspace, 'rel2'));
        return 'rel2/victim.txt';
      },
      /symbolic link that leads outside/,
    ],
    [
      'symlink as the final component pointing outside',
      async () => {
        await symlink(join(outside, 'victim.txt'), join(workspace, 'link.txt'));
        return 'link.txt';
      },
      /symbolic link; write_file does not write through links/,
    ],
    [
      'dangling symlink as the final component (would create outside)',
      async () => {
        await symlink(join(outside, 'created.txt'), join(workspace, 'dangling.txt'));
        return 'dangling.txt';
      },
      /symbolic link/,
    ],
    [
      'symlink as the final component pointing inside',
      async () => {
        await writeFile(join(workspace, 'target.txt'), 'x');
        await symlink(join(workspace, 'target.txt'), join(workspace, 'inner-link.txt'));
        return 'inner-link.txt';
      },
      /symbolic link/,
    ],
    [
      'hard link to a file outside',
      async () => {
        await link(join(outside, 'victim.txt'), join(workspace, 'hard.txt'));
        return 'hard.txt';
      },
      /hard links/,
    ],
    [
      'path to an existing folder',
      async () => {
        await mkdir(join(workspace, 'dir'));
        return 'dir';
      },
      /is a folder/,
    ],
    ['trailing slash', async () => 'newdir/', /names a folder/],
    ['the workspace itself', async () => '.', /workspace folder itself/],
    ['the workspace by absolute path', async () => workspace, /workspace folder itself/],
    [
      'a file used as a folder',
      async () => {
        await writeFile(join(workspace, 'plain'), 'x');
        return 'plain/child.txt';
      },
      /is a file, not a folder/,
    ],
    ['a NUL byte', async () => 'a\0b', /NUL/],
    ['blank', async () => '  ', /empty/],
  ];

  it.each(cases)('%s', async (_name, setup, message) => {
    const path = await setup();
    const text = await refusal({ path, content: 'PWNED' });
    expect(text).toMatch(message);
    await outsideUntouched();
    expect(existsSync(join(outside, 'created.txt'))).toBe(false);
  });

  it('a FIFO is refused without hanging', async () => {
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [join(workspace, 'pipe')]);
    expect(await refusal({ path: 'pipe', content: 'x' })).toMatch(/not a regular file/);
  });

  it('a symlink swapped in after a first write is still refused', async () => {
    await write({ path: 'swap.txt', content: 'first' });
    await unlink(join(workspace, 'swap.txt'));
    await symlink(join(outside, 'victim.txt'), join(workspace, 'swap.txt'));
    expect(await refusal({ path: 'swap.txt', content: 'second' })).toMatch(/symbolic link/);
    await outsideUntouched();
    expect(lstatSync(join(workspace, 'swap.txt')).isSymbolicLink()).toBe(true);
  });

  it('a parent folder swapped for an outside symlink after a first write is still refused', async () => {
    await write({ path: 'docs/a.txt', content: 'first' });
    await rm(join(workspace, 'docs'), { recursive: true });
    await symlink(outside, join(workspace, 'docs'));
    expect(await refusal({ path: 'docs/victim.txt', content: 'second' })).toMatch(/leads outside/);
    await outsideUntouched();
  });

  it('refuses missing folders to be created through an outside link', async () => {
    await symlink(outside, join(workspace, 'out'));
    await refusal({ path: 'out/x/y/z.txt', content: 'x' });
    await outsideUntouched();
  });
});

describe('write_file: schema and description', () => {
  const ajv = new Ajv({ strict: true, allErrors: true });
  const validate = ajv.compile(writeFileTool.inputSchema);

  it.each([
    [{ path: 'a.txt', content: 'x' }, true],
    [{ path: 'a.txt', content: '' }, true],
    [{ path: 'a.txt' }, false],
    [{ content: 'x' }, false],
    [{ path: '', content: 'x' }, false],
    [{ path: 'a.txt', content: 5 }, false],
    [{ path: 'a.txt', content: 'x', mode: '0777' }, false],
  ])('%j valid: %s', (args, ok) => {
    expect(validate(args)).toBe(ok);
  });

  it('content over 5 MiB characters fails the schema', () => {
    expect(validate({ path: 'a.txt', content: 'x'.repeat(5 * 1024 * 1024) })).toBe(true);
    expect(validate({ path: 'a.txt', content: 'x'.repeat(5 * 1024 * 1024 + 1) })).toBe(false);
  });

  it('a path over 1024 characters fails the schema', () => {
    expect(validate({ path: 'x'.repeat(1025), content: '' })).toBe(false);
  });

  it('is trusted, named write_file, and its example is true', async () => {
    const tool = createWriteFileTool();
    expect(tool.name).toBe('write_file');
    expect(tool.trusted).toBe(true);
    expect(tool.inputSchema.additionalProperties).toBe(false);
    expect(tool.description.length).toBeGreaterThan(300);
    const example = /Example call: (\{.*?\}) returns "(.*?)"/.exec(tool.description);
    expect(example).not.toBeNull();
    const args = JSON.parse(example?.[1] as string) as WriteFileArgs;
    expect(await write(args)).toBe(example?.[2]);
  });
});

describe('write_file: failures name the file, not internals', () => {
  it('an over-long file name is a correction', async () => {
    await expect(write({ path: `${'n'.repeat(300)}.txt`, content: 'x' })).rejects.toBeInstanceOf(
      ToolInputError,
    );
  });
});
