import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The fault suite starts its own servers and runs apart: `npm run test:faults`.
    // The layer rules' test runs with the lint (vitest.lint.config.ts).
    exclude: ['test/faults/**', 'test/cluster/**', 'test/lint/**', 'node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/setup-runtime.ts'],
    pool: 'forks',
    // Files share their worker's module cache (imports once per worker, not per file): a file leaves no
    // state behind that another could see (test/helpers/env.ts gives each its own database and queue).
    isolate: false,
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    reporters: ['default'],
  },
});
