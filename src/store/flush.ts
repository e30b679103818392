import { closeSync, fsyncSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** `path` (a file or a folder) on disk, not only in the page cache. */
export function flushPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Each file, then each folder, of `root` on disk (a folder after what it holds). */
export function flushTree(root: string): void {
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) flushTree(path);
    else if (entry.isFile()) flushPath(path);
  }
  flushPath(root);
}
