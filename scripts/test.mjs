// `npm test`: installs what the suite needs (npm packages, the Temporal CLI, the Java time-skipping test
// server, Schemathesis for the conformance test, Chromium for browser tests), then runs every test with lint,
// typecheck, format check and the workflow bundle check beside them, and the fault suite and the cluster test
// beside its last files.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { checkCache, keepCheckCaches, restoreCheckCaches } from './check-caches.mjs';
import { ensureDependencies } from './deps.mjs';
import { runCaptured, runQuietly } from './quiet.mjs';
import { readReport, reportArgs } from './vitest-report.mjs';
import {
  ensureBtcd,
  ensureChromium,
  ensureOtherNode,
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
const otherNode = await ensureOtherNode();
const hasBrowserTests = existsSync('test/e2e') && readdirSync('test/e2e').some((f) => f.endsWith('.test.ts'));
if (hasBrowserTests) env.CHROMIUM_PATH = await ensureChromium();

// The JSON report, not Vitest's exit code, says whether the run passed (scripts/vitest-report.mjs).
const results = reportArgs();

// The checks run beside the tests: the tests leave part of two cores idle while they wait on servers and
// timers, and the checks fill it. Their output is shown under their names as soon as all are done (a failed
// one says so then: Ctrl-C stops the tests); the run fails at the end if any failed.
// They keep caches outside the clone (scripts/check-caches.mjs), so a fresh clone redoes only what changed.
restoreCheckCaches();
const checks = [
  [
    'lint',
    ['npx', 'eslint', '.', '--cache', '--cache-strategy', 'content', '--cache-location', checkCache.eslint],
  ],
  ['lint rules', ['npx', 'vitest', 'run', '--config', 'vitest.lint.config.ts']],
  ['typecheck', ['npx', 'tsc', '--noEmit', '--incremental', '--tsBuildInfoFile', checkCache.tsc]],
  ['format', ['node', 'scripts/format-check.mjs']],
  ['workflow bundle', ['npx', 'tsx', 'scripts/check-workflow-bundle.ts']],
  // The unit and edge tiers on Node 24 too (README: the Node lines the service runs on).
  ...(otherNode
    ? [
        [
          'unit and edge tiers on Node 24',
          [otherNode, 'node_modules/vitest/vitest.mjs', 'run', '--config', 'vitest.unit.config.ts'],
        ],
      ]
    : []),
];
const checking = Promise.all(checks.map(([, [command, ...args]]) => runCaptured(command, args, env))).then(
  (checked) => {
    keepCheckCaches();
    for (const [i, [name]] of checks.entries()) {
      process.stdout.write(`\n== ${name} ==\n${checked[i].output}`);
      if (checked[i].status !== 0) process.stderr.write(`\n${name} failed\n`);
    }
    return checked.find((c) => c.status !== 0)?.status ?? 0;
  },
);
// The fault suite's two files and the cluster test (docs/reliability.md) run beside the main suite's last
// files, each started once the main suite has its number of files or fewer left to finish: most of their
// time is spent waiting on processes they killed or stopped, and the main suite's last files leave a core
// idle. The fault suite's processes test, the longest and the most idle (20 s without Postgres), starts
// first; the `npm run dev` test and the cluster test, which start whole stacks, at the very end. Their output
// is shown under their names once the main suite's is done. Skipped when only some files run.
const suites = [];
if (process.argv.length <= 2 && !env.SKIP_FAULTS) {
  env.TEMPORAL_CLI_PATH ??= await ensureTemporalCli();
  suites.push(
    {
      name: 'fault suite: processes',
      args: ['--config', 'vitest.faults.config.ts', 'test/faults/processes'],
      whenLeft: 65,
    },
    {
      name: 'fault suite: npm run dev',
      args: ['--config', 'vitest.faults.config.ts', 'test/faults/dev-stack'],
      whenLeft: 20,
    },
  );
}
if (process.argv.length <= 2 && !env.SKIP_CLUSTER) {
  const { server, sqlTool } = await ensureTemporalServer();
  env.TEMPORAL_SERVER_PATH = server;
  env.TEMPORAL_SQL_TOOL_PATH = sqlTool;
  suites.push({ name: 'cluster test', args: ['--config', 'vitest.cluster.config.ts'], whenLeft: 20 });
}
const progress = join(dirname(results.file), 'progress');
const mainEnv = { ...env, PAYMENTS_TEST_PROGRESS: progress };
const started = new Map();
const start = (suite) => {
  if (!started.has(suite)) started.set(suite, runSuite(suite.name, suite.args));
};
const watching = setInterval(() => {
  const [finished, total] = existsSync(progress) ? readFileSync(progress, 'utf8').split(' ').map(Number) : [];
  for (const suite of suites) if (total > 0 && total - finished <= suite.whenLeft) start(suite);
}, 1000);
const testStatus = await runQuietly(
  'npx',
  ['vitest', 'run', ...results.args, '--reporter=./scripts/vitest-progress.mjs', ...process.argv.slice(2)],
  mainEnv,
);
clearInterval(watching);
const checkStatus = await checking;
// Those started finish; the others start only when the rest passed.
if (testStatus === 0 && checkStatus === 0) suites.forEach(start);
const ran = await Promise.all(started.values());
for (const { name, output } of ran) process.stdout.write(`\n== ${name} ==\n${output}`);
if (checkStatus !== 0) {
  process.stderr.write('\na check failed (above)\n');
  process.exit(checkStatus);
}
if (testStatus !== 0) {
  process.stderr.write('\ntests failed\n');
  process.exit(testStatus);
}
const passed = [checkReport(results.file, 'tests')];
for (const { name, file, status } of ran) {
  // Vitest's exit code too, where it is non-zero (an error outside the tests is also in its report's folder).
  if (status !== 0) {
    process.stderr.write(`\n${name} failed (exit status ${status})\n`);
    process.exit(1);
  }
  passed.push(checkReport(file, name));
}
process.stdout.write(`\n${passed.reduce((a, b) => a + b, 0)} passed, 0 failed\n`);

/** Runs one Vitest configuration (and files) with its output captured: its output, report and exit status. */
async function runSuite(name, args) {
  const report = reportArgs();
  const { status, output } = await runCaptured('npx', ['vitest', 'run', ...args, ...report.args], env);
  return { name, output, file: report.file, status };
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
