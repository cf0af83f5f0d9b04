// `npm run test:faults`: the fault suite (docs/reliability.md), with the Temporal CLI it needs.
import { spawnSync } from 'node:child_process';
import { ensureDependencies } from './deps.mjs';
import { ensureTemporalCli } from './toolchain.mjs';

await ensureDependencies();
const env = {
  ...process.env,
  TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH ?? (await ensureTemporalCli()),
};
const result = spawnSync(
  'npx',
  ['vitest', 'run', '--config', 'vitest.faults.config.ts', ...process.argv.slice(2)],
  { stdio: 'inherit', env },
);
process.exit(result.status ?? 1);
