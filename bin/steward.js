#!/bin/sh
//usr/bin/env true; case "$1" in start | chat | sandboxd) exec node --max-semi-space-size=1 --heap-growing-percent=50 "$0" "$@" ;; esac; exec node "$0" "$@"
import module from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

// steward runs its TypeScript sources directly, which needs Node's built-in type stripping (22.18+).
if (!process.features.typescript) {
  process.stderr.write(
    `steward: Node.js ${process.version} cannot run steward; use Node.js 22.18 or newer ` +
      '(from a checkout, `npx steward` and `npm run` use the bundled Node 24 after `npm ci`)\n',
  );
  process.exit(2);
}
// Compiled code and stripped TypeScript are kept on disk and checked against each file's contents:
// a start after the first skips most of the work of loading about 200 modules. The cache is code
// this process will run, so it lives in the user's own cache folder (NODE_COMPILE_CACHE, else
// $XDG_CACHE_HOME or ~/.cache), never in the shared temp folder where another local user could
// plant entries. Node turns the cache on by itself when NODE_COMPILE_CACHE is set.
const home = homedir();
const cacheHome = process.env.XDG_CACHE_HOME || (home ? join(home, '.cache') : '');
if (!process.env.NODE_COMPILE_CACHE && cacheHome)
  module.enableCompileCache?.(join(cacheHome, 'steward', 'compile-cache'));
// The timing marks (cli/startup-timing.ts) load only when asked for.
const mark = process.env.STEWARD_DEBUG_TIMING
  ? (await import('../cli/startup-timing.ts')).stageMarks(process.env, process.stderr)
  : () => {};
// A long-running command keeps V8's young generation small (1 MiB semi-spaces instead of 16):
// a bot's allocations are small and short-lived, and the default young generation alone holds
// about 20 MiB of RSS. The old generation grows by at most half at a time: a turn reads its
// session's log, so a long session makes garbage in proportion, and V8's default growth (up to 4x)
// sizes the heap for that garbage and keeps it (RSS after 1,000 turns of one chat 153 MiB against
// 228 without the flag; the live heap stays about 16 MiB either way). V8 reads these flags only at
// start-up. Launched as a program (`npx steward`, the bin link), the file is first a shell script:
// its second line, a comment to JavaScript, starts Node with the flags. Launched as
// `node bin/steward.js`, the process replaces itself once (same pid, stdio and environment) with
// them, which costs a second Node boot (about 0.1 s of a start on a 2-core machine).
const LONG_RUNNING = new Set(['start', 'chat', 'sandboxd']);
const withFlags = process.execArgv.some((arg) => arg.startsWith('--max-semi-space-size'));
mark(withFlags ? 'node ready (with the heap flags)' : 'node ready');
if (LONG_RUNNING.has(process.argv[2] ?? '') && !withFlags && typeof process.execve === 'function') {
  process.execve(process.execPath, [
    process.execPath,
    '--max-semi-space-size=1',
    '--heap-growing-percent=50',
    ...process.execArgv,
    ...process.argv.slice(1),
  ]);
}
const { runCli } = await import('../cli/main.ts');
mark('cli loaded');
process.exitCode = await runCli(process.argv.slice(2));
