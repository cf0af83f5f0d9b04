import { defineConfig } from 'vitest/config';

/** `npm run bench:capacity`: the cluster measured at each worker count (docs/capacity.md). */
export default defineConfig({
  test: {
    include: ['test/cluster/capacity.bench.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 3_600_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
