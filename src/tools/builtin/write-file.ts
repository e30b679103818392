import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readlink, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Tool, ToolContext } from '../types.ts';
import { ToolInputError } from '../types.ts';

export type WriteFileArgs = {
  path: string;
  content: string;
};

export const WRITE_FILE_MAX_CONTENT = 5 * 1024 * 1024;
export const WRITE_FILE_MAX_PATH = 1024;

/** Whether `path` is `root` or lies below it (both absolute and normalised). */
function isInside(path: string, root: string): boolean {
  if (path === root) return true;
  return path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw error;
  }
}

const OUTSIDE =
  'write_file only writes inside the workspace: give a path relative to the workspace root, such as "notes/todo.md".';

/**
 * The path's segments relative to the workspace root, checked lexically: no `..`, no `~`, no absolute
 * path outside the workspace, and a file name at the end. The real path is checked later, on disk.
 */
function segmentsOf(path: string, workspace: string, workspaceReal: string): string[] {
  if (path.includes('\0')) throw new ToolInputError('The path contains a NUL character; remove it.');
  if (path.trim() === '') throw new ToolInputError(`The path is empty. ${OUTSIDE}`);
  // Checked on the raw text, before any normalising, so "a/../b" and "/ws/a/../b" are refused alike.
  if (path.split('/').includes('..')) {
    throw new ToolInputError(`"${path}" contains "..", which is not allowed. ${OUTSIDE}`);
  }
  let rel = path;
  if (isAbsolute(path)) {
    const absolute = resolve(path);
    const root = [workspace, workspaceReal].find((r) => isInside(absolute, r));
    if (root === undefined) throw new ToolInputError(`"${path}" is outside the workspace. ${OUTSIDE}`);
    rel = relative(root, absolute);
  }
  const segments = rel.split('/').filter((s) => s !== '' && s !== '.');
  if (segments[0]?.startsWith('~')) {
    throw new ToolInputError(`"${path}": "~" is not expanded here. ${OUTSIDE}`);
  }
  const long = segments.find((s) => Buffer.byteLength(s) > 255);
  if (long !== undefined) {
    throw new ToolInputError(
      `"${long.slice(0, 40)}…" is longer than 255 bytes, too long for a file or folder name.`,
    );
  }
  if (segments.length === 0) {
    throw new ToolInputError(
      `"${path}" names the workspace folder itself; add a file name, e.g. "notes.md".`,
    );
  }
  if (/\/\.?$/.test(path)) {
    throw new ToolInputError(`"${path}" ends in "/", so it names a folder; add a file name after it.`);
  }
  return segments;
}

/**
 * Walks the parent folders one by one from the real workspace root, creating missing ones there and
 * following a symlink only when its real target stays inside. Returns the parent's real path.
 */
async function ensureParent(
  parents: string[],
  workspaceReal: string,
): Promise<{ dir: string; created: string[] }> {
  let dir = workspaceReal;
  const created: string[] = [];
  for (let i = 0; i < parents.length; i++) {
    const shown = parents.slice(0, i + 1).join('/');
    const next = join(dir, parents[i] as string);
    let info = await lstatOrNull(next);
    if (info === null) {
      try {
        await mkdir(next);
        created.push(shown);
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw error;
      }
      info = await lstat(next);
    }
    if (info.isSymbolicLink()) {
      let target: string;
      try {
        target = await realpath(next);
      } catch {
        throw new ToolInputError(`"${shown}" is a symbolic link to nothing; choose another folder.`);
      }
      if (!isInside(target, workspaceReal)) {
        throw new ToolInputError(
          `"${shown}" is a symbolic link that leads outside the workspace. ${OUTSIDE}`,
        );
      }
      if (!(await stat(target)).isDirectory()) {
        throw new ToolInputError(`"${shown}" is a link to a file, not a folder; choose another path.`);
      }
      dir = target;
    } else if (info.isDirectory()) {
      dir = next;
    } else {
      throw new ToolInputError(`"${shown}" is a file, not a folder, so nothing can be written inside it.`);
    }
  }
  return { dir, created };
}

const PROC_FD = '/proc/self/fd';

/**
 * Opens the parent folder without following a link at its last component and, where /proc exists,
 * checks where the open descriptor really is; the file is then opened relative to that descriptor,
 * so a folder swapped for a symlink after the check cannot redirect the write.
 */
async function openParent(dir: string, workspaceReal: string): Promise<{ handle: FileHandle; base: string }> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    let actual: string;
    try {
      actual = await readlink(`${PROC_FD}/${handle.fd}`);
    } catch {
      return { handle, base: dir }; // no procfs: the path was checked just above
    }
    if (!isInside(actual, workspaceReal)) {
      throw new ToolInputError(`The target folder moved outside the workspace while writing. ${OUTSIDE}`);
    }
    return { handle, base: `${PROC_FD}/${handle.fd}` };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

async function writeConfined(args: WriteFileArgs, ctx: ToolContext): Promise<string> {
  if (typeof args.path !== 'string') throw new ToolInputError('write_file needs a string "path".');
  if (typeof args.content !== 'string') throw new ToolInputError('write_file needs a string "content".');
  const workspace = resolve(ctx.workspace);
  await mkdir(workspace, { recursive: true });
  const workspaceReal = await realpath(workspace);
  const segments = segmentsOf(args.path, workspace, workspaceReal);
  const name = segments[segments.length - 1] as string;
  const shown = segments.join('/');
  if (ctx.signal.aborted) throw new Error('cancelled before writing');

  const { dir, created } = await ensureParent(segments.slice(0, -1), workspaceReal);
  const parent = await openParent(dir, workspaceReal);
  let file: FileHandle | undefined;
  try {
    const existing = await lstatOrNull(join(dir, name));
    // O_NOFOLLOW: a symlink as the last component fails (ELOOP) instead of being written through.
    // O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of hanging. No O_TRUNC yet: the
    // file is checked first, then truncated.
    try {
      file = await open(
        `${parent.base}/${name}`,
        constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
        0o644,
      );
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ELOOP' || code === 'EMLINK') {
        throw new ToolInputError(
          `"${shown}" is a symbolic link; write_file does not write through links. Write to a plain path instead.`,
        );
      }
      if (code === 'EISDIR') {
        throw new ToolInputError(`"${shown}" is a folder; add a file name, e.g. "${shown}/notes.md".`);
      }
      if (code === 'ENXIO') {
        throw new ToolInputError(`"${shown}" is not a regular file; choose another name.`);
      }
      // The opened path is a /proc descriptor path; name the file the model asked for instead.
      throw new Error(`could not open "${shown}" for writing (${code ?? String(error)})`);
    }
    const info = await file.stat();
    if (!info.isFile()) throw new ToolInputError(`"${shown}" is not a regular file; choose another name.`);
    if (info.nlink > 1) {
      // A hard link may share its contents with a file outside the workspace.
      throw new ToolInputError(`"${shown}" has other hard links; write to a new file name instead.`);
    }
    await file.truncate(0);
    const bytes = Buffer.from(args.content, 'utf8');
    let written = 0;
    while (written < bytes.length) {
      const { bytesWritten } = await file.write(bytes, written, bytes.length - written, written);
      written += bytesWritten;
    }
    const what = existing === null ? 'new file' : `replaced the previous ${existing.size} bytes`;
    const folders =
      created.length > 0 ? `; created folder${created.length > 1 ? 's' : ''} ${created.join(', ')}` : '';
    return `Wrote ${written} bytes to ${shown} (${what}${folders}).`;
  } finally {
    await file?.close();
    await parent.handle.close();
  }
}

export function createWriteFileTool(): Tool<WriteFileArgs> {
  return {
    name: 'write_file',
    description: [
      "Creates or replaces one text file in the owner's workspace folder with exactly the given content",
      '(UTF-8), and returns the number of bytes written and the path relative to the workspace.',
      'Use it to save notes, drafts, code or data the owner asked for; prefer it over shell redirects.',
      'It replaces the whole file: to change part of a file, read it first (shell: cat) and write the full',
      'new text. Missing parent folders are created.',
      'Arguments: path (required) is relative to the workspace root, e.g. "notes/2025-06-02.md"; an',
      'absolute path is accepted only if it lies inside the workspace. Refused, with a message saying why:',
      'paths with "..", "~" or outside the workspace, a folder as the target, symbolic links (as the file',
      'or as a folder leading outside the workspace), and some protected names such as .env files.',
      `content (required) is the full text, at most ${WRITE_FILE_MAX_CONTENT} characters; "" makes an empty file.`,
      'Example call: {"path": "notes/todo.md", "content": "# Todo\\n- call Bob\\n"} returns',
      '"Wrote 18 bytes to notes/todo.md (new file; created folder notes)."',
    ].join(' '),
    inputSchema: {
      type: 'object',
      properties: {
        path: {
          type: 'string',
          minLength: 1,
          maxLength: WRITE_FILE_MAX_PATH,
          description: 'File path relative to the workspace root, e.g. "drafts/letter.md". No "..".',
        },
        content: {
          type: 'string',
          maxLength: WRITE_FILE_MAX_CONTENT,
          description: 'The complete new content of the file, as text. Replaces anything already there.',
        },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    trusted: true,
    execute: writeConfined,
  };
}

export const writeFileTool: Tool<WriteFileArgs> = createWriteFileTool();
