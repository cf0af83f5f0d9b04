// `npm run record:histories`: records workflow histories (test/replay/histories) for the replay test.
import { spawnSync } from 'node:child_process';
import { ensureDependencies } from './deps.mjs';
import { ensureTemporalCli, ensureTestServer } from './toolchain.mjs';

await ensureDependencies();
const env = { ...process.env };
if (!env.TEMPORAL_ADDRESS) env.TEMPORAL_CLI_PATH = await ensureTemporalCli();
env.TEMPORAL_TEST_SERVER_PATH = await ensureTestServer();
const result = spawnSync('npx', ['vitest', 'run', '--config', 'vitest.record.config.ts'], {
  stdio: 'inherit',
  env,
});
process.exit(result.status ?? 1);
