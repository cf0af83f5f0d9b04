// `npm run dev`: installs what is missing, builds or finds the Temporal CLI, then runs the service.
import { spawn } from 'node:child_process';
import { ensureDependencies } from './deps.mjs';
import { ensureTemporalCli } from './toolchain.mjs';

await ensureDependencies();
const env = { ...process.env };
if (!env.TEMPORAL_ADDRESS) env.TEMPORAL_CLI_PATH = await ensureTemporalCli();

const child = spawn(process.execPath, ['--import', 'tsx', 'src/dev/index.ts'], { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => child.kill(signal));
}
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
