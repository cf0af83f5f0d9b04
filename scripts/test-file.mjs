// `npm run test:file -- <file>...`: the given test files with the cached tools, no lint stage: the quick
// inner loop. Files all under test/unit/ or test/edge/ run with the unit configuration (no Postgres, no
// Temporal). Given a source file (not a test), it runs every test that imports it, directly or not
// (`vitest related`). Exits 1 when any test fails, as the run's JSON report says (scripts/vitest-report.mjs).
import { ensureDependencies } from './deps.mjs';
import { runQuietly } from './quiet.mjs';
import { readReport, reportArgs } from './vitest-report.mjs';
import {
  ensureBtcd,
  ensureChromium,
  ensureSchemathesis,
  ensureStripeMock,
  ensureTemporalCli,
  ensureTestServer,
} from './toolchain.mjs';

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write('usage: npm run test:file -- <test file>...\n');
  process.exit(2);
}
await ensureDependencies();
const env = { ...process.env };
const unit = files.every((file) => file.startsWith('test/unit/') || file.startsWith('test/edge/'));
// A source file among them: the tests that import any of them, not the files themselves.
const related = files.some((file) => !/\.test\.[cm]?[jt]s$/.test(file));
const any = (folder) => related || files.some((file) => file.startsWith(folder));
if (!unit) {
  if (!env.TEMPORAL_ADDRESS) env.TEMPORAL_CLI_PATH ??= await ensureTemporalCli();
  env.TEMPORAL_TEST_SERVER_PATH ??= await ensureTestServer();
  env.STRIPE_MOCK_PATH ??= await ensureStripeMock();
  env.BTCD_PATH ??= await ensureBtcd();
  if (any('test/e2e/')) env.CHROMIUM_PATH ??= await ensureChromium();
  if (any('test/conformance/')) env.SCHEMATHESIS_PATH ??= await ensureSchemathesis();
}
const config = unit ? ['--config', 'vitest.unit.config.ts'] : [];
const mode = related ? ['related', '--run'] : ['run'];
const report = reportArgs();
const status = await runQuietly('npx', ['vitest', ...mode, ...config, ...report.args, ...files], env);
const outcome = readReport(report.file);
if (status !== 0 || !outcome.ok) {
  process.stderr.write(`\ntest:file failed: ${outcome.ok ? `vitest exited with ${status}` : outcome.why}\n`);
  process.exit(1);
}
