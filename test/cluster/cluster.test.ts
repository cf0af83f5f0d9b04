/**
 * The production topology (`npm run test:cluster`, docs/reliability.md): a real Temporal server on
 * PostgreSQL, two `ROLE=api` and two `ROLE=worker` processes, a bounded mixed load, and one API and one
 * worker killed with SIGKILL mid-load and started again. Afterwards every transaction is final, nothing
 * is lost or done twice, and every webhook arrived.
 */
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { startCarryingEverySearchAttribute } from '../helpers/search-attribute-probe';
import { describe, expect, it } from 'vitest';
import { cleanUpAfterAll, FaultyReceiver, freePorts, startRoles, until, waitReady } from '../faults/harness';
import { LoadClient, loadMerchant, type Created } from '../faults/load';
import { expectClean, report, runLoad, verify } from '../faults/verdict';
import { startClusterStack } from './stack';

const TRANSACTIONS = Number(process.env.CLUSTER_TRANSACTIONS ?? 100);
const CONCURRENCY = 4;

const cleanups = cleanUpAfterAll();

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('cluster', () => {
  it('two APIs and two workers on a real Temporal server lose and double nothing when one of each is killed', async () => {
    const stack = await startClusterStack((stop) => cleanups.push(stop));
    await expectSearchAttributesUsableAtOnce(stack.env.TEMPORAL_ADDRESS!);
    const { databaseUrl, credentials } = stack;
    const [apiA, apiB, metricsA, metricsB, receiverPort] = await freePorts(5);
    // The reconciliation schedule every 5 s, its windows ending 2 s before each run: both workers make sure
    // of it as they start (and again after the kill), and each window is still read once.
    const env = {
      ...stack.env,
      BASE_URL: `http://127.0.0.1:${apiA}`,
      RECONCILIATION_EVERY_SECONDS: '5',
      RECONCILIATION_LAG_SECONDS: '2',
    };
    const { apis, workers, apiUrls, workerUrls, ...services } = startRoles(
      env,
      { api: [apiA!, apiB!], worker: [metricsA!, metricsB!] },
      (stop) => cleanups.push(stop),
    );
    await services.ready();

    const receiver = new FaultyReceiver(receiverPort!);
    await receiver.start();
    cleanups.push(() => receiver.close());
    // Requests alternate between the two APIs, as a load balancer would spread them.
    let turn = 0;
    const client = new LoadClient(
      () => apiUrls[turn++ % apiUrls.length]!,
      loadMerchant(credentials),
      receiver.url,
    );
    const created: Created[] = [];
    let killing = true;
    const load = runLoad(client, TRANSACTIONS, CONCURRENCY, created, () => pause(killing ? 200 : 0));

    await until('the load to be under way', async () => created.length >= 15, 180_000);
    const killedAfter = created.length;
    // As the OOM killer or a lost machine would: no shutdown hook runs.
    await Promise.all([apis[0]!.kill(), workers[0]!.kill()]);
    process.stdout.write(
      `[cluster] SIGKILLed ${apis[0]!.name} and ${workers[0]!.name} after ${killedAfter} transactions\n`,
    );
    await pause(3_000);
    apis[0]!.start();
    workers[0]!.start();
    await Promise.all([waitReady(apiUrls[0]!, apis[0]!), waitReady(workerUrls[0]!, workers[0]!)]);
    killing = false;
    await load;

    const verdict = await verify(databaseUrl, created, receiver, credentials.merchant_id);
    report('cluster', 'two APIs and two workers on a real Temporal server on PostgreSQL', verdict, {
      processesKilled: 2,
      killedAfterTransactions: killedAfter,
      requestRetries: client.retries,
      webhookAttempts: receiver.attempts,
    });
    for (const line of verdict.notFinal) {
      process.stdout.write(
        `[cluster] not final: ${line}\n  ${(client.trail.get(line.split(' ')[0]!) ?? []).join('\n  ')}\n`,
      );
    }
    process.stdout.write(
      `[cluster] transactions ${verdict.transactions}, processes killed 2, lost ${verdict.lost}, doubled ${verdict.duplicatedEffects}, webhooks missing ${verdict.webhooksMissing}\n`,
    );
    expect(created.length).toBe(TRANSACTIONS);
    expectClean(verdict);

    // Scheduled reconciliation: two more runs after the load, then every window read once, back to back,
    // and no break left unsettled.
    const runs = async () => {
      const { rows } = await pgQuery<{ window_start: Date; window_end: Date; id: string }>(
        databaseUrl,
        `select id, window_start, window_end from reconciliation_runs
         where trigger = 'schedule' and state = 'finished' order by window_start`,
      );
      return rows;
    };
    const before = (await runs()).length;
    await until(
      'two more scheduled reconciliation runs',
      async () => (await runs()).length >= before + 2,
      120_000,
    );
    const finished = await runs();
    for (const [i, run] of finished.entries())
      if (i > 0) expect(run.window_start, run.id).toEqual(finished[i - 1]!.window_end);
    const { rows: unsettled } = await pgQuery<{
      source: string;
      kind: string;
      reference: string;
      message: string;
    }>(
      databaseUrl,
      `select source, kind, reference, message from reconciliation_breaks where state in ('open', 'acknowledged')`,
    );
    expect(unsettled).toEqual([]);
    process.stdout.write(
      `[cluster] reconciliation: ${finished.length} scheduled runs, each window once, 0 breaks open\n`,
    );
  }, 1_200_000);
});

/**
 * A fresh cluster's search attributes are usable by the very next request: the set-up waits until every
 * Temporal service has them (src/temporal/search-attributes.ts). Without that wait the frontend refuses a
 * start carrying them for up to one namespace reload (2 s) after they were registered.
 */
async function expectSearchAttributesUsableAtOnce(address: string) {
  const connection = await Connection.connect({ address });
  try {
    await startCarryingEverySearchAttribute(new Client({ connection }));
  } finally {
    await connection.close();
  }
}

async function pgQuery<Row extends Record<string, unknown>>(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query<Row>(text);
  } finally {
    await client.end();
  }
}
