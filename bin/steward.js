#!/usr/bin/env node
// steward runs its TypeScript sources directly, which needs Node's built-in type stripping (22.18+).
if (!process.features.typescript) {
  process.stderr.write(
    `steward: Node.js ${process.version} cannot run steward; use Node.js 22.18 or newer ` +
      '(from a checkout, `npx steward` and `npm run` use the bundled Node 24 after `npm ci`)\n',
  );
  process.exit(2);
}
const { runCli } = await import('../cli/main.ts');
process.exitCode = await runCli(process.argv.slice(2));
