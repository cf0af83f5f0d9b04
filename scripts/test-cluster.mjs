// `npm run test:cluster`: two API and two worker processes on a real Temporal server on PostgreSQL, one of
// each killed mid-load (docs/reliability.md). Builds the server from the Go module proxy on its first run.
// `--capacity` runs the capacity measurement on the same stack instead (`npm run bench:capacity`,
// docs/capacity.md).
import { spawnSync } from 'node:child_process';
import { ensureDependencies } from './deps.mjs';
import { ensureTemporalServer } from './toolchain.mjs';

const capacity = process.argv.includes('--capacity');
await ensureDependencies();
const { server, sqlTool } = await ensureTemporalServer();
const result = spawnSync(
  'npx',
  [
    'vitest',
    'run',
    '--config',
    capacity ? 'vitest.capacity.config.ts' : 'vitest.cluster.config.ts',
    ...process.argv.slice(2).filter((arg) => arg !== '--capacity'),
  ],
  {
    stdio: 'inherit',
    env: { ...process.env, TEMPORAL_SERVER_PATH: server, TEMPORAL_SQL_TOOL_PATH: sqlTool },
  },
);
process.exit(result.status ?? 1);
