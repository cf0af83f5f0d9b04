import { defineConfig } from 'vitest/config';

/** `npm run test:unit`: the pure-module tests alone, quickly, with no database or Temporal server. */
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    pool: 'threads',
    reporters: ['default'],
  },
});
