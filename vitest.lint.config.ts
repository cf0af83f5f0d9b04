import { defineConfig } from 'vitest/config';

/**
 * Part of `npm run lint`: the layer rules' own test (test/lint), which lints probe imports with the
 * repository's eslint.boundaries.js. Apart from the unit tests, which it would slow down (the TypeScript
 * resolver takes seconds to warm up).
 */
export default defineConfig({
  test: {
    include: ['test/lint/**/*.test.ts'],
    pool: 'threads',
    testTimeout: 30_000,
    reporters: ['default'],
  },
});
