// Installs npm dependencies when node_modules is missing or older than the lockfile.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

/** Seconds the install took, or 0 when node_modules was up to date. */
export async function ensureDependencies() {
  const marker = 'node_modules/.package-lock.json';
  const stale =
    !existsSync(marker) || statSync('package-lock.json').mtimeMs > statSync(marker).mtimeMs + 1000;
  if (!stale) return 0;
  const started = Date.now();
  const elapsed = () => Math.round((Date.now() - started) / 1000);
  process.stderr.write(
    '[deps] installing npm dependencies (npm ci, about a minute on a cold npm cache)...\n',
  );
  // npm ci says nothing while it works: a heartbeat says it still does.
  const heartbeat = setInterval(() => process.stderr.write(`[deps]   npm ci: ${elapsed()} s\n`), 15_000);
  try {
    const code = await new Promise((resolve, reject) => {
      const child = spawn('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { stdio: 'inherit' });
      child.on('error', reject);
      child.on('exit', (status) => resolve(status));
    });
    if (code !== 0) throw new Error('npm ci failed');
  } finally {
    clearInterval(heartbeat);
  }
  process.stderr.write(`[deps] installed in ${elapsed()} s\n`);
  return elapsed();
}
