// Preloaded (`node --import`) into a steward process by the lazy-loading tests: at exit, writes
// every module URL the process loaded, one a line, to $STEWARD_TEST_MODULES_FILE.
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const loaded = new Set();
registerHooks({
  load(url, context, next) {
    loaded.add(url);
    return next(url, context);
  },
});
process.on('exit', () => {
  if (process.env.STEWARD_TEST_MODULES_FILE)
    writeFileSync(process.env.STEWARD_TEST_MODULES_FILE, [...loaded].join('\n'));
});
