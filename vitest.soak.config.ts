import { defineConfig } from 'vitest/config';

/** `npm run bench:soak`: an hour of steady load on `npm run dev`'s stack, then idle (docs/capacity.md). */
export default defineConfig({
  test: {
    include: ['test/cluster/soak.bench.ts'],
    pool: 'forks',
    maxWorkers: 1,
    hookTimeout: 300_000,
    reporters: ['default'],
  },
});
