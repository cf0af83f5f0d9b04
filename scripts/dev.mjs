// `npm run dev`: installs what is missing (npm packages and the Temporal CLI at once), then runs the
// service. It tells the service what the first steps took, so its banner gives the whole time to ready.
import { spawn } from 'node:child_process';
import { ensureDependencies } from './deps.mjs';
import { ensureTemporalCli } from './toolchain.mjs';

const started = Date.now();
const timed = async (step) => {
  const from = Date.now();
  const value = await step();
  return { value, seconds: (Date.now() - from) / 1000 };
};
const [deps, cli] = await Promise.all([
  timed(ensureDependencies),
  process.env.TEMPORAL_ADDRESS ? Promise.resolve(undefined) : timed(ensureTemporalCli),
]);
const env = { ...process.env, DEV_STARTED_AT: String(started) };
const phases = [];
if (deps.value > 0) phases.push(`npm ci ${deps.seconds.toFixed(0)} s`);
if (cli) {
  env.TEMPORAL_CLI_PATH = cli.value;
  if (cli.seconds >= 1) phases.push(`Temporal CLI ${cli.seconds.toFixed(0)} s`);
}
env.DEV_PHASES = phases.join(', ');

const child = spawn(process.execPath, ['bin/bundled.js', 'src/dev/index.ts'], { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => child.kill(signal));
}
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
