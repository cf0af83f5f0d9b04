import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import {
  backendDatabase,
  cpuSeconds,
  descendants,
  postgresCpuBetween,
  treeCpuSeconds,
  type PostgresCpu,
} from '../../bench/load';

/** Node burning `seconds` of its own CPU (not of the clock: a loaded machine only makes it slower). */
const burn = (seconds: number) => `while (process.cpuUsage().user < ${seconds * 1e6});`;

let stop: (() => void) | undefined;
afterEach(() => stop?.());

describe("the bench's CPU reading (bench/load.ts)", () => {
  it('counts a process with the children it reaped, and a tree with the children still running', async () => {
    // A shell that runs one child to its end, then starts one that burns and stays.
    const shell = spawn('sh', [
      '-c',
      `node -e '${burn(0.3)}'; node -e '${burn(0.3)} setInterval(() => {}, 1000);' & wait`,
    ]);
    stop = () => {
      for (const { pid } of descendants(shell.pid!)) process.kill(pid, 'SIGKILL');
      shell.kill('SIGKILL');
    };
    const deadline = Date.now() + 45_000;
    let staying: number | undefined;
    while (Date.now() < deadline) {
      staying = descendants(shell.pid!).find(({ argv }) => argv.join(' ').includes('setInterval'))?.pid;
      if (staying !== undefined && cpuSeconds(staying) >= 0.3) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(staying).toBeDefined();
    // The first child ended: its time is the shell's now, as a backend's lands in its postmaster's.
    const shellAlone = cpuSeconds(shell.pid);
    expect(shellAlone).toBeGreaterThanOrEqual(0.3);
    // The tree adds the child still running.
    expect(treeCpuSeconds(shell.pid)).toBeGreaterThanOrEqual(shellAlone + 0.3);
    expect(cpuSeconds(undefined)).toBe(0);
    expect(treeCpuSeconds(undefined)).toBe(0);
    // Two Node processes' start and 0.6 s of CPU: slow on a machine busy with the other test files.
  }, 60_000);
});

describe("PostgreSQL's CPU by database (bench/load.ts)", () => {
  it('names the database of a client backend only', () => {
    expect(backendDatabase('postgres: payments payments 127.0.0.1(40312) idle')).toBe('payments');
    expect(backendDatabase('postgres: temporal temporal_visibility [local] SELECT')).toBe(
      'temporal_visibility',
    );
    expect(backendDatabase('postgres: autovacuum worker payments')).toBeUndefined();
    expect(backendDatabase('postgres: checkpointer ')).toBeUndefined();
    expect(backendDatabase('/usr/lib/postgresql/bin/postgres -D /tmp/pg')).toBeUndefined();
  });

  it('splits what was spent between two readings, what no live backend holds under other', () => {
    const before: PostgresCpu = {
      total: 10,
      backends: new Map([
        [1, { database: 'payments', seconds: 2 }],
        [2, { database: 'temporal', seconds: 3 }],
        [3, { database: 'payments', seconds: 1 }],
      ]),
    };
    const after: PostgresCpu = {
      // Backend 3 ended (its second landed in the postmaster's), backend 4 started, 1 and 2 went on.
      total: 16,
      backends: new Map([
        [1, { database: 'payments', seconds: 3.5 }],
        [2, { database: 'temporal', seconds: 4 }],
        [4, { database: 'temporal', seconds: 2 }],
      ]),
    };
    expect(postgresCpuBetween(before, after)).toEqual({ payments: 1.5, temporal: 3, other: 1.5 });
  });
});
