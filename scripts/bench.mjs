// `npm run bench`: installs what is missing, then runs the load harness against a private local stack.
import { spawnSync } from 'node:child_process';
import { ensureDependencies } from './deps.mjs';
import { ensureTemporalCli } from './toolchain.mjs';

await ensureDependencies();
const env = { ...process.env, TEMPORAL_CLI_PATH: await ensureTemporalCli() };
const result = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts'], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
