import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a `npm run dev` that was killed hard (SIGKILL, an OOM kill, a closed terminal) leaves behind: its
 * PostgreSQL, Temporal dev server and anvil keep running, holding the ports and the data. The next start finds
 * them (and its local chain) by the pid files written here and in `postmaster.pid`, stops them, and says so.
 */

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The command line of a process, or '' when it cannot be read (then nothing is killed on a guess). */
function commandOf(pid: number): string {
  try {
    if (existsSync(`/proc/${pid}/cmdline`)) {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    }
    return execFileSync('ps', ['-p', String(pid), '-o', 'command='], { encoding: 'utf8' });
  } catch {
    return '';
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

/** Stops a process gracefully (`signal`), then with SIGKILL when it does not go in time. */
async function stopProcess(pid: number, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  if (await waitForExit(pid, graceMs)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  await waitForExit(pid, 5_000);
}

const pidIn = (file: string): number | undefined => {
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]!.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
};

export class DevStackRunning extends Error {}

/**
 * Claims the data folder for this run. Refuses when another `npm run dev` on the same folder is alive;
 * stops the PostgreSQL and Temporal dev server a dead one left running. Answers what it did, for the log.
 */
export async function claimDataDir(dataDir: string): Promise<string[]> {
  const said: string[] = [];
  const ownerFile = join(dataDir, 'dev.pid');
  const owner = pidIn(ownerFile);
  if (
    owner !== undefined &&
    owner !== process.pid &&
    alive(owner) &&
    commandOf(owner).includes('src/dev/index.ts')
  ) {
    throw new DevStackRunning(
      `another npm run dev (pid ${owner}) is running on ${dataDir}: stop it first (Ctrl-C in its terminal, or kill ${owner})`,
    );
  }

  const temporal = pidIn(join(dataDir, 'temporal.pid'));
  if (temporal !== undefined && alive(temporal) && commandOf(temporal).includes('start-dev')) {
    await stopProcess(temporal, 'SIGTERM', 10_000);
    said.push(`stopped the Temporal dev server (pid ${temporal}) an earlier run left behind`);
  }
  rmSync(join(dataDir, 'temporal.pid'), { force: true });

  for (const [file, marker] of chainPidFiles(dataDir)) {
    const chain = pidIn(file);
    if (chain !== undefined && alive(chain) && commandOf(chain).includes(marker)) {
      // SIGTERM lets anvil write its state file and btcd close its database, so the chain survives.
      await stopProcess(chain, 'SIGTERM', 10_000);
      said.push(`stopped a local chain (${marker}, pid ${chain}) an earlier run left behind`);
    }
    rmSync(file, { force: true });
  }

  // postmaster.pid: first line the postmaster's pid. SIGINT is PostgreSQL's fast shutdown: it rolls back
  // open transactions and writes a checkpoint, so the next start needs no recovery.
  const postgres = pidIn(join(dataDir, 'postgres', 'postmaster.pid'));
  if (postgres !== undefined && alive(postgres) && commandOf(postgres).includes('postgres')) {
    await stopProcess(postgres, 'SIGINT', 30_000);
    said.push(`stopped the PostgreSQL (pid ${postgres}) an earlier run left behind`);
  }

  writeFileSync(ownerFile, `${process.pid}\n`);
  return said;
}

/**
 * The pid files of the local chains with the name their command line shows: `anvil-<chain id>.pid` (and
 * `anvil.pid` of runs before there were several) and `btcd.pid`.
 */
function chainPidFiles(dataDir: string): [string, 'anvil' | 'btcd'][] {
  if (!existsSync(dataDir)) return [];
  return readdirSync(dataDir).flatMap((name): [string, 'anvil' | 'btcd'][] => {
    if (/^anvil(-\d+)?\.pid$/.test(name)) return [[join(dataDir, name), 'anvil']];
    if (name === 'btcd.pid') return [[join(dataDir, name), 'btcd']];
    return [];
  });
}

/** Remembers a child's pid so that a run after a hard kill can stop it. */
export function rememberPid(dataDir: string, name: string, pid: number | undefined): void {
  if (pid !== undefined) writeFileSync(join(dataDir, `${name}.pid`), `${pid}\n`);
}

/**
 * Gives the data folder up as the process ends, however it ends. A child still running (another library's
 * exit hook can end the process before its stop finished) is told to stop, and its pid file stays, so the
 * next start waits for it rather than finding its port taken.
 */
export function releaseDataDir(dataDir: string): void {
  rmSync(join(dataDir, 'dev.pid'), { force: true });
  const children = [[join(dataDir, 'temporal.pid'), 'start-dev'], ...chainPidFiles(dataDir)] as const;
  for (const [file, marker] of children) {
    const pid = pidIn(file);
    if (pid !== undefined && alive(pid) && commandOf(pid).includes(marker)) {
      try {
        process.kill(pid, 'SIGTERM');
        continue;
      } catch {
        // gone meanwhile
      }
    }
    rmSync(file, { force: true });
  }
}
