import { defineConfig } from 'vitest/config';

/** `npm run test:faults`: the fault suite alone (docs/reliability.md). It starts its own servers. */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    pool: 'forks',
    // Its two files side by side: each waits mostly on the processes it stopped or killed.
    maxWorkers: 2,
    testTimeout: 900_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
