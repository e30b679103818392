// Preloaded (`node --import`) into a steward process by the lazy-loading tests: at exit, writes
// every module URL the process loaded, one a line, to $STEWARD_TEST_MODULES_FILE, then Node's own
// internal modules it loaded as `node:internal/...` (from process.moduleLoadList).
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
    writeFileSync(
      process.env.STEWARD_TEST_MODULES_FILE,
      [
        ...loaded,
        ...internalModules()
          .filter((entry) => entry.startsWith('NativeModule internal/'))
          .map((entry) => `node:${entry.slice('NativeModule '.length)}`),
      ].join('\n'),
    );
});

/** @returns {string[]} Node's list of what it loaded (undocumented, present since Node 0.x). */
function internalModules() {
  return /** @type {{ moduleLoadList?: string[] }} */ (/** @type {unknown} */ (process)).moduleLoadList ?? [];
}
