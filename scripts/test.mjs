// `npm test`: installs what the suite needs (npm packages, the Temporal CLI, the Java time-skipping test
// server, Schemathesis for the conformance test, Chromium for browser tests), then runs every test with lint,
// typecheck, format check and the workflow bundle check beside them, then the fault suite and the cluster test.
import { existsSync, readdirSync } from 'node:fs';
import { ensureDependencies } from './deps.mjs';
import { runCaptured, runQuietly } from './quiet.mjs';
import { readReport, reportArgs } from './vitest-report.mjs';
import {
  ensureBtcd,
  ensureChromium,
  ensureSchemathesis,
  ensureStripeMock,
  ensureTemporalCli,
  ensureTemporalServer,
  ensureTestServer,
} from './toolchain.mjs';

await import('./check-lockfile.mjs');
await ensureDependencies();
const env = { ...process.env };
if (!env.TEMPORAL_ADDRESS) env.TEMPORAL_CLI_PATH = await ensureTemporalCli();
env.TEMPORAL_TEST_SERVER_PATH = await ensureTestServer();
env.STRIPE_MOCK_PATH = await ensureStripeMock();
env.BTCD_PATH = await ensureBtcd();
env.SCHEMATHESIS_PATH = await ensureSchemathesis();
const hasBrowserTests = existsSync('test/e2e') && readdirSync('test/e2e').some((f) => f.endsWith('.test.ts'));
if (hasBrowserTests) env.CHROMIUM_PATH = await ensureChromium();

// The JSON report, not Vitest's exit code, says whether the run passed (scripts/vitest-report.mjs).
const results = reportArgs();

// The checks run beside the tests: the tests leave part of two cores idle while they wait on servers and
// timers, and the checks fill it. Their output is shown under their names as soon as all are done (a failed
// one says so then: Ctrl-C stops the tests); the run fails at the end if any failed.
const checks = [
  ['lint', ['npx', 'eslint', '.']],
  ['lint rules', ['npx', 'vitest', 'run', '--config', 'vitest.lint.config.ts']],
  ['typecheck', ['npx', 'tsc', '--noEmit']],
  ['format', ['npx', 'prettier', '--check', '.']],
  ['workflow bundle', ['npx', 'tsx', 'scripts/check-workflow-bundle.ts']],
];
const checking = Promise.all(checks.map(([, [command, ...args]]) => runCaptured(command, args, env))).then(
  (checked) => {
    for (const [i, [name]] of checks.entries()) {
      process.stdout.write(`\n== ${name} ==\n${checked[i].output}`);
      if (checked[i].status !== 0) process.stderr.write(`\n${name} failed\n`);
    }
    return checked.find((c) => c.status !== 0)?.status ?? 0;
  },
);
const testStatus = await runQuietly('npx', ['vitest', 'run', ...results.args, ...process.argv.slice(2)], env);
const checkStatus = await checking;
if (checkStatus !== 0) {
  process.stderr.write('\na check failed (above)\n');
  process.exit(checkStatus);
}
if (testStatus !== 0) {
  process.stderr.write('\ntests failed\n');
  process.exit(testStatus);
}
const passed = [checkReport(results.file, 'tests')];

// The fault suite and the cluster test (docs/reliability.md) run last, side by side: most of their time is
// spent waiting on processes they killed or stopped. The fault suite's output comes as it runs, the cluster
// test's once it is done. Skipped when only some files run.
const suites = [];
if (process.argv.length <= 2 && !env.SKIP_FAULTS) {
  env.TEMPORAL_CLI_PATH ??= await ensureTemporalCli();
  suites.push(['fault suite', 'vitest.faults.config.ts', 'live']);
}
if (process.argv.length <= 2 && !env.SKIP_CLUSTER) {
  const { server, sqlTool } = await ensureTemporalServer();
  env.TEMPORAL_SERVER_PATH = server;
  env.TEMPORAL_SQL_TOOL_PATH = sqlTool;
  suites.push(['cluster test', 'vitest.cluster.config.ts', 'captured']);
}
const ran = await Promise.all(suites.map(([name, config, output]) => runSuite(name, config, output)));
for (const { name, file, status } of ran) {
  // Vitest's exit code too: its report says nothing of an error outside the tests (an unhandled rejection).
  if (status !== 0) {
    process.stderr.write(`\n${name} failed (exit status ${status})\n`);
    process.exit(1);
  }
  passed.push(checkReport(file, name));
}
process.stdout.write(`\n${passed.reduce((a, b) => a + b, 0)} passed, 0 failed\n`);

/**
 * Runs one Vitest configuration, its output shown as it comes (`live`) or under its name once it is done
 * (`captured`, for a suite that runs beside another). Answers where its report is and its exit status.
 */
async function runSuite(name, config, output) {
  const report = reportArgs();
  const args = ['vitest', 'run', '--config', config, ...report.args];
  if (output === 'live') {
    process.stdout.write(`\n== ${name} ==\n`);
    return { name, file: report.file, status: await runQuietly('npx', args, env) };
  }
  const { status, output: text } = await runCaptured('npx', args, env);
  process.stdout.write(`\n== ${name} ==\n${text}`);
  return { name, file: report.file, status };
}

/** Exits when the run's report is missing or says anything failed. Answers how many tests passed. */
function checkReport(file, name) {
  const report = readReport(file);
  if (!report.ok) {
    process.stderr.write(`\n${name} failed: ${report.why}\n`);
    process.exit(1);
  }
  return report.passed;
}
