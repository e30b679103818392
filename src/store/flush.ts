import { closeSync, fsyncSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** `path` (a file or a folder) on disk, not only in the page cache. */
function flushPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A folder on disk where the system can flush one (some cannot, as PostgreSQL allows). */
export function flushFolder(path: string): void {
  try {
    flushPath(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EBADF' && code !== 'EISDIR' && code !== 'EACCES') throw error;
  }
}

/** Each file, then each folder, of `root` on disk (a folder after what it holds), but `except`. */
export function flushTree(root: string, except: string[] = []): void {
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (except.includes(entry.name)) continue;
    const path = join(root, entry.name);
    if (entry.isDirectory()) flushTree(path);
    else if (entry.isFile()) flushPath(path);
  }
  flushFolder(root);
}
