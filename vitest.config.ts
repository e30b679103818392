import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Embedded PGlite takes seconds to create a database, and CLI tests start real processes.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
