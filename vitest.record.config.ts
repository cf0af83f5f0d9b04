import { defineConfig } from 'vitest/config';

/** `npm run record:histories`: records workflow histories for the replay test (test/replay/). */
export default defineConfig({
  test: {
    include: ['test/replay/record-histories.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/setup-runtime.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
