#!/usr/bin/env node
import module from 'node:module';

// steward runs its TypeScript sources directly, which needs Node's built-in type stripping (22.18+).
if (!process.features.typescript) {
  process.stderr.write(
    `steward: Node.js ${process.version} cannot run steward; use Node.js 22.18 or newer ` +
      '(from a checkout, `npx steward` and `npm run` use the bundled Node 24 after `npm ci`)\n',
  );
  process.exit(2);
}
// Compiled code and stripped TypeScript are kept on disk (NODE_COMPILE_CACHE, else a folder in the
// system's temp dir) and checked against each file's contents: a start after the first skips most
// of the work of loading about 200 modules.
module.enableCompileCache?.();
const { runCli } = await import('../cli/main.ts');
process.exitCode = await runCli(process.argv.slice(2));
