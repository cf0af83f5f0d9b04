import { defineConfig } from 'vitest/config';

/** `npm run test:cluster`: the production topology on a real Temporal server (docs/reliability.md). */
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 1_200_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
