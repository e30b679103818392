// Making a workspace writable for the container's user without giving it away: the container runs
// as uid 65534 with the workspace's group, and every folder is group-writable and setgid (so what
// either side creates stays in that group) and every file group-writable. A workspace owned by
// group root gets group 65534 instead, so a container never runs with gid 0. Symlinks are never
// followed: each entry is opened with O_NOFOLLOW and changed through its descriptor.
import { constants } from 'node:fs';
import { lstat, open, readdir, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { DEFAULT_SANDBOX_LIMITS } from '../limits.ts';
import { SANDBOX_UID } from './sandbox-config.ts';

export function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The request's workspace as a real path under the root, or why it may not be mounted. */
export async function checkWorkspace(
  root: string,
  requested: string,
): Promise<{ ok: true; path: string } | { ok: false; error: string }> {
  let realRoot: string;
  let real: string;
  try {
    realRoot = await realpath(root);
  } catch {
    return { ok: false, error: `sandboxd's workspace root ${root} does not exist` };
  }
  try {
    real = await realpath(requested);
  } catch {
    return { ok: false, error: `refused: workspace ${requested} does not exist` };
  }
  if (!inside(realRoot, real)) {
    return {
      ok: false,
      error: `refused: workspace ${requested} is not inside sandboxd's workspace root ${root}`,
    };
  }
  if (!(await lstat(real)).isDirectory())
    return { ok: false, error: `refused: workspace ${requested} is not a folder` };
  return { ok: true, path: real };
}

const O_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Fixes group and mode of one entry through its own descriptor; a symlink or a special file is left alone. */
async function grant(path: string, gid: number, asRoot: boolean): Promise<'dir' | 'file' | 'skip'> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, O_FLAGS);
  } catch {
    return 'skip'; // a symlink (ELOOP), a vanished entry, or one we may not open
  }
  try {
    const st = await handle.stat();
    const dir = st.isDirectory();
    if (!dir && !st.isFile()) return 'skip';
    if (st.gid !== gid && asRoot) await handle.chown(st.uid, gid);
    const want = st.mode | 0o060 | (dir ? 0o2010 : 0);
    if ((st.mode & 0o7777) !== (want & 0o7777)) await handle.chmod(want & 0o7777);
    return dir ? 'dir' : 'file';
  } finally {
    await handle.close();
  }
}

/** Prepares the workspace for one run and returns the gid the container joins. */
export async function prepareWorkspace(
  workspace: string,
  asRoot = process.getuid?.() === 0,
): Promise<number> {
  const st = await lstat(workspace);
  const gid = st.gid === 0 && asRoot ? SANDBOX_UID : st.gid;
  let seen = 0;
  const stack = [workspace];
  while (stack.length > 0) {
    const path = stack.pop() as string;
    if (++seen > DEFAULT_SANDBOX_LIMITS.maxWorkspaceEntries) {
      throw new Error(
        `the workspace has more than ${DEFAULT_SANDBOX_LIMITS.maxWorkspaceEntries} entries; sandboxd will not prepare it`,
      );
    }
    if ((await grant(path, gid, asRoot)) !== 'dir') continue;
    const names = await readdir(path).catch(() => [] as string[]);
    for (const name of names) stack.push(join(path, name));
  }
  return gid;
}
