import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';

/**
 * `npm run test:file` is the inner loop: its exit status must say whether the tests passed, on both of its
 * paths (the unit configuration, and the main one with Postgres and Temporal, where a dependency's exit hook
 * once turned a failure into 0). The main configuration's runs use this suite's Postgres and Temporal server, as
 * TEST_DATABASE_URL and TEMPORAL_ADDRESS let a developer do, instead of starting their own.
 */
function runTestFile(dir: string, body: string): { status: number | null; output: string } {
  const file = `test/${dir}/zz-test-file-script-${process.pid}.test.ts`;
  writeFileSync(file, `import { expect, it } from 'vitest';\nit('checks', () => {\n  ${body}\n});\n`);
  try {
    const env = {
      ...process.env,
      TEST_DATABASE_URL: inject('adminDatabaseUrl'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
    };
    const run = spawnSync('node', ['scripts/test-file.mjs', file], {
      encoding: 'utf8',
      env,
      timeout: 170_000,
    });
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(file, { force: true });
  }
}

describe('npm run test:file', () => {
  it.each(['unit', 'api'])(
    'exits 1 on a failing test and 0 on a passing one (test/%s)',
    { timeout: 360_000 },
    (dir) => {
      const failing = runTestFile(dir, 'expect(1).toBe(2);');
      expect(failing.output).toContain('1 failed');
      expect(failing.status).toBe(1);
      const passing = runTestFile(dir, 'expect(1).toBe(1);');
      expect(passing.status, passing.output).toBe(0);
    },
  );
});
