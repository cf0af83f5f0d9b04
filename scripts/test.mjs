// `npm test`: installs what the suite needs (npm packages, the Temporal CLI, the Java time-skipping test
// server, Schemathesis for the conformance test, Chromium for browser tests), then runs lint, typecheck, format check, the workflow bundle check,
// every test, the fault suite and the cluster test.
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

// The checks are independent: on two cores they run side by side, each one's
// output shown under its name once it is done.
const checks = [
  ['lint', ['npx', 'eslint', '.']],
  ['lint rules', ['npx', 'vitest', 'run', '--config', 'vitest.lint.config.ts']],
  ['typecheck', ['npx', 'tsc', '--noEmit']],
  ['format', ['npx', 'prettier', '--check', '.']],
  ['workflow bundle', ['npx', 'tsx', 'scripts/check-workflow-bundle.ts']],
];
const checked = await Promise.all(checks.map(([, [command, ...args]]) => runCaptured(command, args, env)));
for (const [i, [name]] of checks.entries()) {
  process.stdout.write(`\n== ${name} ==\n${checked[i].output}`);
  if (checked[i].status !== 0) {
    process.stderr.write(`\n${name} failed\n`);
    process.exit(checked[i].status);
  }
}
process.stdout.write('\n== tests ==\n');
const testStatus = await runQuietly('npx', ['vitest', 'run', ...results.args, ...process.argv.slice(2)], env);
if (testStatus !== 0) {
  process.stderr.write('\ntests failed\n');
  process.exit(testStatus);
}
const passed = [checkReport(results.file, 'tests')];

// The fault suite and the cluster test (docs/reliability.md) run last, about three minutes together;
// skipped when only some files run.
if (process.argv.length <= 2 && !env.SKIP_FAULTS) {
  env.TEMPORAL_CLI_PATH ??= await ensureTemporalCli();
  passed.push(await runSuite('fault suite', 'vitest.faults.config.ts'));
}
if (process.argv.length <= 2 && !env.SKIP_CLUSTER) {
  const { server, sqlTool } = await ensureTemporalServer();
  env.TEMPORAL_SERVER_PATH = server;
  env.TEMPORAL_SQL_TOOL_PATH = sqlTool;
  passed.push(await runSuite('cluster test', 'vitest.cluster.config.ts'));
}
process.stdout.write(`\n${passed.reduce((a, b) => a + b, 0)} passed, 0 failed\n`);

/** Runs one Vitest configuration on its own; answers how many of its tests passed. */
async function runSuite(name, config) {
  const report = reportArgs();
  process.stdout.write(`\n== ${name} ==\n`);
  await runQuietly('npx', ['vitest', 'run', '--config', config, ...report.args], env);
  return checkReport(report.file, name);
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
