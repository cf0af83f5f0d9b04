import type { ChildProcess } from 'node:child_process';

/** Stops a dev server the stack started: SIGTERM, SIGKILL after `graceMs`, resolved once it has exited. */
export async function stopChild(
  child: ChildProcess,
  exited: Promise<unknown>,
  graceMs: number,
): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(killer);
}
