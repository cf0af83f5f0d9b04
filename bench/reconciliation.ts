// `npm run bench:recon`: a day of transactions (100,000 unless BENCH_RECON_TRANSACTIONS says otherwise),
// seeded straight into a fresh database with their ledger entries, webhook events and sandbox books, then
// reconciled by the database legs (docs/reconciliation.md) over that day: the time each leg takes, the peak
// memory of this process, and the breaks found (none; then the three put in by hand); then a scheduled
// run's 15-minute window at the day's end, leg by leg. Embedded Postgres on loopback, nothing else.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { createDatabase, runMigrations } from '../src/db/client';
import { createMerchant } from '../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../src/schemas/sandbox-cards';
import { startEmbeddedPostgres } from '../src/dev/postgres';
import { reconciliationLegs } from '../activities/reconciliation';

const N = Number(process.env.BENCH_RECON_TRANSACTIONS ?? 100_000);
const say = (line: string) => process.stdout.write(`[recon bench] ${line}\n`);

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'payments-recon-bench-'));
  chmodSync(scratch, 0o755);
  const postgres = await startEmbeddedPostgres({
    dir: join(scratch, 'pg'),
    database: 'recon',
    persistent: false,
  });
  const database = createDatabase(postgres.url, 4);
  try {
    await runMigrations(database.pool);
    const merchant = await createMerchant(database.db, randomBytes(32).toString('hex'), {
      name: 'Reconciliation bench',
      wallets: [{ currency: 'USD', amount: 10_000_000_000n }],
      terminals: SANDBOX_TERMINALS,
    });
    const wallet = merchant.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;
    const terminal = async (kind: string) =>
      (
        await database.db.execute<{ id: string }>(
          sql`select id from terminals where merchant_id = ${merchant.merchant_id} and mode = 'test' and ${kind} = any(kinds) limit 1`,
        )
      ).rows[0]!.id;
    const [cardTerminal, payoutTerminal] = [await terminal('card'), await terminal('payout')];
    const day = new Date(Date.UTC(2026, 10, 27));
    const seeded = Date.now();
    await seed(database.db, {
      n: N,
      merchant: merchant.merchant_id,
      wallet,
      cardTerminal,
      payoutTerminal,
      day,
    });
    say(
      `seeded ${N.toLocaleString('en')} transactions of one day in ${((Date.now() - seeded) / 1000).toFixed(1)} s`,
    );

    const scope = {
      from: day,
      to: new Date(day.getTime() + 86_400_000),
      transactionIds: [] as string[],
      references: [] as string[],
    };
    const reconcile = async (window = scope) => {
      const found: string[] = [];
      const seconds: Record<string, number> = {};
      for (const leg of reconciliationLegs(database.db)) {
        const started = performance.now();
        for (const f of await leg.check(window)) found.push(`${leg.source}/${f.kind}/${f.reference}`);
        seconds[leg.source] = (performance.now() - started) / 1000;
      }
      return { found, seconds };
    };
    const rssBefore = process.memoryUsage().rss;
    const clean = await reconcile();
    const peakMb = process.resourceUsage().maxRSS / 1024;
    const total = Object.values(clean.seconds).reduce((a, b) => a + b, 0);
    say(
      `reconciled ${N.toLocaleString('en')} transactions in ${total.toFixed(1)} s (` +
        Object.entries(clean.seconds)
          .map(([source, s]) => `${source} ${s.toFixed(1)} s`)
          .join(', ') +
        `); peak RSS ${peakMb.toFixed(0)} MB (${(rssBefore / 2 ** 20).toFixed(0)} MB before); ${clean.found.length} breaks`,
    );
    if (clean.found.length > 0)
      throw new Error(`a clean day has breaks: ${clean.found.slice(0, 5).join(', ')}`);

    // What a scheduled run reads: the day's last 15 minutes, with the whole day in the tables. A leg whose
    // time follows the tables rather than its window reads more than its window.
    const last = { ...scope, from: new Date(scope.to.getTime() - 15 * 60_000) };
    const scheduled = await reconcile(last);
    say(
      `a scheduled run's window, the day's last 15 minutes (${Math.round(N / 96).toLocaleString('en')} transactions): ` +
        Object.entries(scheduled.seconds)
          .map(([source, s]) => `${source} ${(s * 1000).toFixed(0)} ms`)
          .join(', ') +
        `; ${scheduled.found.length} breaks`,
    );
    if (scheduled.found.length > 0)
      throw new Error(`a clean window has breaks: ${scheduled.found.slice(0, 5).join(', ')}`);

    // Three differences by hand: a wallet balance, a processor's amount, an entry without a source.
    await database.db.execute(sql`update wallets set available = available + 1 where id = ${wallet}`);
    await database.db.execute(
      sql`update sandbox_operations set amount_minor = amount_minor + 1 where idempotency_key = (select min(idempotency_key) from sandbox_operations where operation = 'authorization' and state = 'approved')`,
    );
    await database.db.execute(
      sql`insert into ledger_entries (wallet_id, reference, step, amount, created_at) values (${wallet}, 'by-hand', 'credit', 5, ${new Date(day.getTime() + 1000)})`,
    );
    const broken = await reconcile();
    say(
      `with three breaks put in by hand: ${broken.found.length} breaks (${broken.found.map((f) => f.split('/').slice(0, 2).join('/')).join(', ')})`,
    );
    if (broken.found.length !== 3) throw new Error(`expected 3 breaks, found ${broken.found.join(', ')}`);
  } finally {
    await database.close();
    await postgres.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * One day of transactions, set-based: three in four card payments (one in ten declined, one in twenty of the
 * paid ones refunded), one in four payouts (one in eight declined), each with what a real run leaves: the
 * processor's record, the payout's ledger steps, the webhook event of its status; the wallet's balance the
 * sum of its entries.
 */
async function seed(
  db: ReturnType<typeof createDatabase>['db'],
  s: { n: number; merchant: string; wallet: string; cardTerminal: string; payoutTerminal: string; day: Date },
): Promise<void> {
  await db.execute(sql`
    insert into transactions (id, merchant_id, mode, kind, request_hash, status, message, amount_minor, currency,
      customer, terminal_id, wallet_id, webhook_url, refunded, created_at, updated_at)
    select 'PAbench' || i, ${s.merchant}, 'test', k.kind, md5(i::text),
      k.status, k.status, 1000 + i % 500, 'USD', '{"first_name":"A","last_name":"B","email":"a@example.com"}'::jsonb,
      case when k.kind = 'card' then ${s.cardTerminal} else ${s.payoutTerminal} end,
      case when k.kind = 'payout' then ${s.wallet} end,
      'https://merchant.example/hook', k.kind = 'card' and k.status = 'SUCCESS' and i % 20 = 3,
      ${s.day}::timestamptz + (i * 86400.0 / ${s.n}) * interval '1 second',
      ${s.day}::timestamptz + (i * 86400.0 / ${s.n}) * interval '1 second'
    from generate_series(1, ${s.n}) i,
      lateral (select case when i % 4 = 0 then 'payout' else 'card' end as kind) kk,
      lateral (select kk.kind,
        case when (kk.kind = 'card' and i % 10 = 1) or (kk.kind = 'payout' and i % 8 = 0) then 'FAILED' else 'SUCCESS' end
          as status) k`);
  await db.execute(sql`
    insert into sandbox_operations (idempotency_key, transaction_id, connector, operation, state, reference, amount_minor,
      currency, created_at, updated_at)
    select t.id || case when t.kind = 'card' then ':authorize:' else ':payout:' end || t.terminal_id, t.id,
      case when t.kind = 'card' then 'sandbox-acquirer' else 'sandbox-payouts' end,
      case when t.kind = 'card' then 'authorization' else 'payout' end,
      case when t.status = 'FAILED' then 'declined' when t.kind = 'card' then 'approved' else 'paid' end,
      'sbx_' || t.id, t.amount_minor, t.currency, t.created_at, t.updated_at
    from transactions t where t.id like 'PAbench%'
    union all
    select t.id || ':refund', t.id, 'sandbox-acquirer', 'refund', 'refunded', 'sbx_refund_' || t.id, t.amount_minor,
      t.currency, t.created_at, t.updated_at
    from transactions t where t.id like 'PAbench%' and t.refunded`);
  await db.execute(sql`
    insert into ledger_entries (wallet_id, reference, step, amount, created_at)
    select t.wallet_id, t.id, s.step, s.amount, t.created_at
    from transactions t,
      lateral (values ('reserve', -t.amount_minor),
        (case when t.status = 'SUCCESS' then 'settle' else 'release' end,
         case when t.status = 'SUCCESS' then 0 else t.amount_minor end)) s(step, amount)
    where t.id like 'PAbench%' and t.kind = 'payout'`);
  await db.execute(sql`
    insert into webhook_events (id, transaction_id, merchant_id, mode, event_key, url, body, status, created_at)
    select 'evt_' || t.id, t.id, t.merchant_id, t.mode, 'status:' || t.status, t.webhook_url, '{}', 'delivered', t.updated_at
    from transactions t where t.id like 'PAbench%'`);
  await db.execute(sql`
    update wallets set available = (select sum(amount) from ledger_entries e where e.wallet_id = wallets.id)
    where id = ${s.wallet}`);
  await db.execute(sql`analyze`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
