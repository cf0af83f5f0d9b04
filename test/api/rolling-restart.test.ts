/**
 * Graceful shutdown (docs/operations.md, shutdown): two API and two worker processes under a steady load,
 * restarted one at a time with SIGTERM as a rolling deploy does. A client that balances over the APIs by
 * their `/readyz`, as a load balancer would, and never retries, sees no request fail.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { createDatabase } from '../../src/db/client';
import { createMerchant, type MerchantCredentials } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import {
  cleanUpAfterAll,
  freePorts,
  startRoles,
  until,
  waitReady,
  type ServiceProcess,
} from '../faults/harness';
import { createTestDatabase } from '../helpers/env';
import { cardRequest, encryptForMerchant, payoutRequest } from '../helpers/merchant-client';
import { startWebhookReceiver } from '../helpers/webhook-receiver';

const DRAIN_SECONDS = Number(process.env.ROLLING_DRAIN_SECONDS ?? 3);
/** A backend counts as ready only on a 200 from `/readyz` this recent: a slow probe cannot keep it in. */
const FRESH_MS = 500;
/**
 * Each lane's pause between transactions: a steady load of about eight requests a second, enough that every
 * drain has requests in flight, and not a throughput test (the fault suite and the cluster test are).
 */
const PACE_MS = Number(process.env.ROLLING_PACE_MS ?? 400);

const cleanups = cleanUpAfterAll();

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Client-side balancing over the API processes by their readiness, polled every 100 ms. */
class Balancer {
  private readonly readyAt = new Map<string, number>();
  /** Backends seen answering 503 "draining", by URL. */
  readonly sawDraining = new Set<string>();
  private running = true;
  private readonly polling: Promise<void>;

  constructor(private readonly backends: string[]) {
    this.polling = this.poll();
  }

  private async poll(): Promise<void> {
    while (this.running) {
      await Promise.all(
        this.backends.map(async (url) => {
          try {
            const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(FRESH_MS) });
            if (response.ok) this.readyAt.set(url, Date.now());
            else {
              this.readyAt.delete(url);
              const body = (await response.json()) as { status?: string };
              if (body.status === 'draining') this.sawDraining.add(url);
            }
          } catch {
            this.readyAt.delete(url);
          }
        }),
      );
      await pause(100);
    }
  }

  /** A ready backend, waiting while none is. */
  async pick(): Promise<string> {
    for (;;) {
      const now = Date.now();
      const fresh = this.backends.filter((url) => now - (this.readyAt.get(url) ?? 0) < FRESH_MS);
      if (fresh.length > 0) return fresh[Math.floor(Math.random() * fresh.length)]!;
      await pause(20);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.polling;
  }
}

describe('rolling restart', () => {
  it('restarts each API and a worker with SIGTERM under load without failing a request', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const masterKey = randomBytes(32).toString('hex');
    const setup = createDatabase(database.url, 1);
    const merchant: MerchantCredentials = await createMerchant(setup.db, masterKey, {
      name: 'Rolling merchant',
      wallets: [{ currency: 'USD', amount: 100_000_000n }],
      terminals: SANDBOX_TERMINALS,
    });
    await setup.close();
    const usdWallet = merchant.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
    const receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());

    const [apiA, apiB, metricsA, metricsB] = await freePorts(4);
    const env = {
      ...process.env,
      LOG_LEVEL: 'warn',
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: `rolling-${randomBytes(4).toString('hex')}`,
      MASTER_KEY: masterKey,
      PAYLOAD_KEYS: `rolling:${randomBytes(32).toString('hex')}`,
      HOST: '127.0.0.1',
      // Where hosted pages are linked from (and not the test runner's own BASE_URL).
      BASE_URL: `http://127.0.0.1:${apiA}`,
      SHUTDOWN_DRAIN_SECONDS: String(DRAIN_SECONDS),
      RATE_LIMIT_PER_SECOND: '10000',
      RATE_LIMIT_BURST: '10000',
    };
    const { apis, workers, apiUrls, workerUrls, ...services } = startRoles(
      env,
      { api: [apiA!, apiB!], worker: [metricsA!, metricsB!] },
      (stop) => cleanups.push(stop),
    );
    await services.ready();

    // The load: card payments and payouts with their status lookups, three lanes at a steady pace, never
    // retried.
    const balancer = new Balancer(apiUrls);
    const failures: string[] = [];
    const created: string[] = [];
    let requests = 0;
    let loading = true;
    const send = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const base = await balancer.pick();
      requests += 1;
      try {
        const response = await fetch(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${merchant.test_secret_key}`,
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          ...(body ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await response.text();
        if (response.status !== 200)
          failures.push(`${method} ${path} via ${base}: ${response.status} ${text}`);
        return JSON.parse(text) as { data?: { transaction_id?: string } };
      } catch (error) {
        failures.push(`${method} ${path} via ${base}: ${String(error)}`);
        return {};
      }
    };
    const lane = async (lane: number) => {
      for (let n = 0; loading; n += 1) {
        const orderId = `rolling-${lane}-${n}`;
        const fields =
          n % 3 === 2
            ? payoutRequest(usdWallet, { order_id: orderId, webhook_url: receiver.url })
            : cardRequest({ order_id: orderId, webhook_url: receiver.url });
        const path = n % 3 === 2 ? '/api/v1/test/payout' : '/api/v1/test/card';
        const answer = await send('POST', path, {
          payload: encryptForMerchant(fields, merchant.encryption_key),
        });
        const id = answer.data?.transaction_id;
        if (id) {
          created.push(id);
          await send('GET', `/api/test/status/${id}`);
        }
        await pause(PACE_MS);
      }
    };
    const load = Promise.all([0, 1, 2].map(lane));

    // One process at a time: stop it with SIGTERM, expect a clean exit, start it again, wait for it.
    const exits: Record<string, number | null> = {};
    const roll = async (service: ServiceProcess, url: string) => {
      await pause(1_500);
      exits[service.name] = await service.terminate();
      service.start();
      await waitReady(url, service);
    };
    await roll(apis[0]!, apiUrls[0]!);
    await roll(workers[0]!, workerUrls[0]!);
    await roll(apis[1]!, apiUrls[1]!);
    await pause(1_500);
    loading = false;
    await load;
    await balancer.stop();

    process.stdout.write(
      `[rolling] ${requests} requests, ${created.length} transactions, ${failures.length} failed; exits ${JSON.stringify(exits)}\n`,
    );
    expect(failures).toEqual([]);
    expect(exits).toEqual({
      [apis[0]!.name]: 0,
      [workers[0]!.name]: 0,
      [apis[1]!.name]: 0,
    });
    // Both APIs went through their drain, answering /readyz 503 while still serving.
    expect([...balancer.sawDraining].sort()).toEqual([...apiUrls].sort());
    expect(created.length).toBeGreaterThan(10);
    expect(requests).toBeGreaterThan(2 * created.length - 1);

    // Every transaction ends, and its webhook arrives.
    const statusOf = async (id: string) => {
      const response = await fetch(`${apiUrls[0]}/api/test/status/${id}`, {
        headers: { authorization: `Bearer ${merchant.test_secret_key}` },
      });
      return ((await response.json()) as { status: string }).status;
    };
    await until('every transaction to succeed', async () => {
      const statuses = await Promise.all(created.map(statusOf));
      return statuses.every((status) => status === 'SUCCESS');
    });
    await until('every webhook to arrive', async () => {
      const delivered = new Set(
        receiver.received.map((w) => (w.json.data as { transaction_id: string }).transaction_id),
      );
      return created.every((id) => delivered.has(id));
    });

    // The workers' own metrics moved: final statuses, webhook attempts, ledger steps, and the SDK's.
    const scrapes = await Promise.all(workerUrls.map(async (url) => (await fetch(`${url}/metrics`)).text()));
    const total = (name: string, labels: string) =>
      scrapes
        .flatMap((text) => text.split('\n'))
        .filter((line) => line.startsWith(`${name}{`) && line.includes(labels))
        .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
    const finals = total('payments_transactions_final_total', 'status="SUCCESS"');
    expect(finals).toBeGreaterThan(0);
    // Once per transaction: the restarted worker forgot its counts, so never more than were created.
    expect(finals).toBeLessThanOrEqual(created.length);
    expect(total('payments_webhook_attempts_total', 'outcome="delivered"')).toBeGreaterThan(0);
    expect(total('payments_ledger_operations_total', 'operation="reserve"')).toBeGreaterThan(0);
    expect(scrapes.join('\n')).toMatch(/^temporal_\w+/m);
    // And each worker process's own (Node's process metrics: memory, heap, event-loop lag), one series each.
    for (const text of scrapes) expect(text.match(/^nodejs_heap_size_used_bytes \d+/gm)).toHaveLength(1);
  }, 300_000);
});
