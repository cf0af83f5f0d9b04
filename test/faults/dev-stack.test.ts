/**
 * The fault suite (`npm run test:faults`), its second half: `npm run dev` killed mid-load, then stopped,
 * leaving nothing running. See docs/reliability.md.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { freePortRun } from '../../src/dev/postgres';
import {
  cleanUpAfterAll,
  CONCURRENCY,
  FaultyReceiver,
  freePorts,
  pause,
  ready,
  scratchDir,
  serviceSettings,
  ServiceProcess,
  TRANSACTIONS,
  until,
} from './harness';
import { devInstanceIn, devSandboxMerchant, LoadClient, loadMerchant, type Created } from './load';
import { expectClean, report, runLoad, verify } from './verdict';

const cleanups = cleanUpAfterAll();
const scratch = () => scratchDir(cleanups);

/**
 * Starts `npm run dev` on ports of its own in a scratch data directory and waits until it serves. A port
 * chosen free may be taken by another test's server before npm run dev binds it, which npm run dev refuses
 * at its start: then it is started again on other ports, in a directory of its own (at most three times).
 */
async function startedDev() {
  for (let attempt = 1; ; attempt += 1) {
    const dir = scratch();
    // The local chains take five consecutive ports from DEV_ANVIL_PORT, apart from the others.
    const anvilPort = await freePortRun(5);
    const [pgPort, temporalPort, uiPort, apiPort, receiverPort, btcdPort, solanaPort] = (await freePorts(12))
      .filter((port) => port < anvilPort || port > anvilPort + 4)
      .slice(0, 7) as [number, number, number, number, number, number, number];
    const vars: NodeJS.ProcessEnv = {
      ...process.env,
      ...serviceSettings,
      PAYMENTS_DATA_DIR: dir,
      PORT: String(apiPort),
      DEV_POSTGRES_PORT: String(pgPort),
      DEV_TEMPORAL_PORT: String(temporalPort),
      DEV_TEMPORAL_UI_PORT: String(uiPort),
      // Its own local chain port too: a developer's `npm run dev` may hold the default one.
      DEV_ANVIL_PORT: String(anvilPort),
      DEV_BTCD_PORT: String(btcdPort),
      DEV_SOLANA_PORT: String(solanaPort),
    };
    // What the test runner puts in the environment is not the developer's: Vite's BASE_URL is '/'.
    for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'BASE_URL', 'NODE_ENV']) delete vars[name];
    const dev = new ServiceProcess('npm run dev', [process.execPath, 'scripts/dev.mjs'], vars);
    cleanups.push(async () => dev.stop());
    dev.start();
    try {
      await until('npm run dev to be ready', ready(`http://127.0.0.1:${apiPort}`), 180_000, () => dev.ended);
      return { dir, env: vars, dev, ports: { uiPort, apiPort, receiverPort } };
    } catch (error) {
      if (attempt < 3 && /is taken by another program/.test(dev.log)) {
        await dev.stop();
        continue;
      }
      throw new Error(`${(error as Error).message}; its output:\n${dev.log}`);
    }
  }
}

describe('fault suite: npm run dev', () => {
  it('npm run dev comes back from a SIGKILL of its own processes mid-load, stopping what they left running', async () => {
    const started = await startedDev();
    const { dir, env } = started;
    const { uiPort, apiPort, receiverPort } = started.ports;
    const baseUrl = `http://127.0.0.1:${apiPort}`;
    let dev = started.dev;

    // The Temporal UI, on the port it was moved to, may call the payload codec from its page.
    const uiOrigin = `http://127.0.0.1:${uiPort}`;
    const preflight = await fetch(`${baseUrl}/codec/decode`, {
      method: 'OPTIONS',
      headers: { origin: uiOrigin, 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    const decoded = await fetch(`${baseUrl}/codec/decode`, {
      method: 'POST',
      headers: { origin: uiOrigin, 'content-type': 'application/json', 'x-namespace': 'default' },
      body: JSON.stringify({ payloads: [] }),
    });
    expect(decoded.status).toBe(200);

    const receiver = new FaultyReceiver(receiverPort!);
    await receiver.start();
    cleanups.push(() => receiver.close());
    const sandbox = devSandboxMerchant(dir);
    const merchant = loadMerchant(sandbox);
    const databaseUrl = devInstanceIn(dir).database_url;
    const client = new LoadClient(() => baseUrl, merchant, receiver.url);
    const created: Created[] = [];
    const total = Math.max(25, Math.floor(TRANSACTIONS / 3));
    const load = runLoad(client, total, CONCURRENCY, created, () => pause(200));

    await until('some transactions to be under way', async () => created.length >= 8, 120_000);
    // The hard kill: the npm run dev node processes only, as an OOM kill or a closed terminal does.
    const devPid = dev.pid!;
    const children = execFileSync('pgrep', ['-P', String(devPid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
    dev.expectExit();
    for (const pid of [devPid, ...children]) process.kill(pid, 'SIGKILL');
    // pgrep exits 1 when nothing matches.
    const orphans = () => {
      try {
        return execFileSync('pgrep', ['-f', dir], { encoding: 'utf8' }).split('\n').filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    const orphanCount = orphans();
    process.stdout.write(
      `[faults] SIGKILLed npm run dev (pids ${[devPid, ...children].join(', ')}); ${orphanCount} processes left running on its data\n`,
    );

    await pause(2_000);
    dev = new ServiceProcess('npm run dev', [process.execPath, 'scripts/dev.mjs'], env);
    dev.start();
    await until('npm run dev to be ready again', ready(baseUrl), 180_000, () => dev.ended).catch(
      (error: Error) => {
        throw new Error(`${error.message}; its output:\n${dev.log}`);
      },
    );
    expect(dev.log).toMatch(
      /stopped the (PostgreSQL|Temporal dev server) \(pid \d+\) an earlier run left behind/,
    );
    await load;

    const verdict = await verify(databaseUrl, created, receiver, sandbox.merchant_id);
    report('faults', 'npm run dev hard kill', verdict, {
      faultsInjected: 1,
      orphansLeftByTheKill: orphanCount,
      requestRetries: client.retries,
    });
    expect(orphanCount).toBeGreaterThan(0);
    expectClean(verdict);

    // A plain stop, as a process manager sends it: SIGTERM to npm run dev's own process only. Whatever
    // library hook ends the process first, nothing it started stays running on its data.
    dev.expectExit();
    process.kill(dev.pid!, 'SIGTERM');
    await until(
      'npm run dev to stop everything it started',
      async () => dev.ended !== undefined && orphans() === 0,
      60_000,
    );
  }, 900_000);
});
