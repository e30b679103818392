// The baseline the channel bench compares with: a git ref exported into a temporary folder
// (`git archive`, so the repository gains no worktree), using this checkout's node_modules.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const CURRENT_TREE = resolve(import.meta.dirname, '../..');

export interface Tree {
  label: string;
  path: string;
  commit: string;
  remove(): void;
}

export function currentTree(): Tree {
  const commit = execFileSync('git', ['-C', CURRENT_TREE, 'rev-parse', '--short', 'HEAD'], {
    encoding: 'utf8',
  }).trim();
  const dirty = execFileSync(
    'git',
    ['-C', CURRENT_TREE, 'status', '--porcelain', '--', 'src', 'cli', 'adapters', 'bin', 'migrations'],
    { encoding: 'utf8' },
  ).trim();
  return {
    label: 'current',
    path: CURRENT_TREE,
    commit: dirty ? `${commit}+changes` : commit,
    remove: () => {},
  };
}

export function baselineTree(ref: string): Tree {
  const commit = execFileSync('git', ['-C', CURRENT_TREE, 'rev-parse', '--short', `${ref}^{commit}`], {
    encoding: 'utf8',
  }).trim();
  const path = mkdtempSync(join(tmpdir(), 'steward-baseline-'));
  execFileSync('sh', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'sh', CURRENT_TREE, commit, path]);
  symlinkSync(realpathSync(join(CURRENT_TREE, 'node_modules')), join(path, 'node_modules'));
  return { label: 'baseline', path, commit, remove: () => rmSync(path, { recursive: true, force: true }) };
}
