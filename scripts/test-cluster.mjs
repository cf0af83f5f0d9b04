// `npm run test:cluster`: two API and two worker processes on a real Temporal server on PostgreSQL, one of
// each killed mid-load (docs/reliability.md). Builds the server from the Go module proxy on its first run.
import { spawnSync } from 'node:child_process';
import { ensureDependencies } from './deps.mjs';
import { ensureTemporalServer } from './toolchain.mjs';

await ensureDependencies();
const { server, sqlTool } = await ensureTemporalServer();
const result = spawnSync(
  'npx',
  ['vitest', 'run', '--config', 'vitest.cluster.config.ts', ...process.argv.slice(2)],
  {
    stdio: 'inherit',
    env: { ...process.env, TEMPORAL_SERVER_PATH: server, TEMPORAL_SQL_TOOL_PATH: sqlTool },
  },
);
process.exit(result.status ?? 1);
