import { defineConfig } from 'vitest/config';

/** `npm run test:unit`: the pure-module tests and the HTTP edge's (test/edge), quickly, with no database or Temporal server. */
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/edge/**/*.test.ts'],
    pool: 'threads',
    // One module graph per thread across files: the imports are most of this suite's time.
    isolate: false,
    reporters: ['default'],
  },
});
