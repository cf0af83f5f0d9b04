// `npm run bench:soak`: steady load on `npm run dev`'s stack with every local chain, then idle, measuring
// what each process keeps and each chain's deposit-to-webhook time (test/cluster/soak.bench.ts,
// docs/capacity.md). Installs what `npm run dev` needs first, btcd included, so BITCOIN is there from the
// start, and builds the real Temporal server (as `npm run bench:capacity` does) for Temporal to run as in
// production. SOAK_MINUTES, SOAK_IDLE_MINUTES, SOAK_RATE and SOAK_SAMPLE_SECONDS bound it.
import { spawnSync } from 'node:child_process';
import { ensureDependencies } from './deps.mjs';
import { ensureBtcd, ensureTemporalCli, ensureTemporalServer } from './toolchain.mjs';

await ensureDependencies();
const [{ server, sqlTool }] = await Promise.all([ensureTemporalServer(), ensureTemporalCli(), ensureBtcd()]);
const result = spawnSync(
  'npx',
  ['vitest', 'run', '--config', 'vitest.soak.config.ts', ...process.argv.slice(2)],
  {
    stdio: 'inherit',
    env: { ...process.env, TEMPORAL_SERVER_PATH: server, TEMPORAL_SQL_TOOL_PATH: sqlTool },
  },
);
process.exit(result.status ?? 1);
