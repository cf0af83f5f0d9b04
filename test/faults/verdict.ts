/**
 * What the fault suite and the cluster test run and promise: a mixed load through every flow, and the
 * verdict read back from Postgres and from what the webhook receiver acknowledged (docs/reliability.md).
 */
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { createDatabase } from '../../src/db/client';
import { reconciliationLegs } from '../../activities/reconciliation';
import { expect } from 'vitest';
import { FaultyReceiver, until } from './harness';
import { FLOWS, type Created, type LoadClient } from './load';

/** Runs `total` transactions, `concurrency` at a time, cycling through every flow, until done. */
export async function runLoad(
  client: LoadClient,
  total: number,
  concurrency: number,
  started: Created[],
  pace: () => Promise<void>,
) {
  let next = 0;
  const lane = async () => {
    while (next < total) {
      const n = next++;
      started.push(await client.run(FLOWS[n % FLOWS.length]!, n));
      await pace();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

export interface Verdict {
  transactions: number;
  byStatus: Record<string, number>;
  notFinal: string[];
  lost: number;
  duplicatedEffects: number;
  walletsOff: number;
  webhooksMissing: number;
  webhookRedeliveries: number;
}

/** The deposits recorded for a transaction, with how each was accounted: for the report of one not final. */
export async function depositsOf(databaseUrl: string, transactionId: string) {
  const db = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const { rows } = await db.query(
      'select tx_hash, amount, disposition, reason from crypto_deposits where transaction_id = $1',
      [transactionId],
    );
    return rows as { tx_hash: string; amount: string; disposition: string; reason: string | null }[];
  } finally {
    await db.end();
  }
}

/** Everything the suite promises, read from Postgres and from what the receiver acknowledged. */
export async function verify(
  databaseUrl: string,
  created: Created[],
  receiver: FaultyReceiver,
  merchantId: string,
) {
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  // `end()` resolves before its clients' sockets close: a server stopped right after (the dev-stack test
  // stops npm run dev next) may still tell one `57P01`, which no pool listener hears any more.
  db.on('connect', (client) => client.on('error', () => undefined));
  try {
    const ids = created.map((c) => c.transactionId);
    const finalStatuses = ['SUCCESS', 'FAILED', 'BLOCKED'];
    // Every transaction reaches a final status (the load answered every customer step).
    await until(
      'every transaction to be final',
      async () => {
        const { rows } = await db.query(
          'select count(*)::int as n from transactions where id = any($1) and status = any($2)',
          [ids, finalStatuses],
        );
        return rows[0].n === ids.length;
      },
      240_000,
    ).catch(() => undefined);
    const { rows } = await db.query<{ id: string; status: string }>(
      'select id, status from transactions where id = any($1)',
      [ids],
    );
    const byStatus: Record<string, number> = {};
    for (const row of rows) byStatus[row.status] = (byStatus[row.status] ?? 0) + 1;
    const notFinal = rows.filter((r) => !finalStatuses.includes(r.status)).map((r) => `${r.id} ${r.status}`);

    // Every final status reaches the merchant, once per event (a retry repeats the same event_id). One not
    // final is reported as such above; waiting for its webhook would only make the report late.
    const final = rows.filter((r) => finalStatuses.includes(r.status));
    await until(
      'every webhook to be acknowledged',
      async () => {
        const acked = new Set(receiver.acknowledged.map((a) => `${a.transactionId}:${a.status}`));
        return final.every((r) => acked.has(`${r.id}:${r.status}`));
      },
      240_000,
    ).catch(() => undefined);
    const acked = new Map<string, Set<string>>();
    for (const a of receiver.acknowledged) {
      const key = `${a.transactionId}:${a.status}`;
      acked.set(key, (acked.get(key) ?? new Set()).add(a.eventId));
    }
    const missing = final.filter((r) => !acked.has(`${r.id}:${r.status}`));
    const webhooksMissing = missing.length;
    // What the service recorded of each missing one: no event (never sent), or its attempts and their errors.
    if (missing.length > 0) {
      const { rows: events } = await db.query(
        `select e.transaction_id, e.event_key, e.status, e.attempts,
           (select json_agg(json_build_object('run', a.run, 'attempt', a.attempt, 'at', a.started_at,
              'http', a.http_status, 'ms', a.latency_ms, 'error', a.error) order by a.started_at)
            from webhook_attempts a where a.event_id = e.id) as tries
         from webhook_events e where e.transaction_id = any($1)`,
        [missing.map((r) => r.id)],
      );
      process.stdout.write(
        `[faults] webhooks missing for ${missing.map((r) => `${r.id} ${r.status}`).join(', ')}; events: ${JSON.stringify(events, null, 2)}\n`,
      );
    }
    const eventsWithTwoIds = [...acked.values()].filter((events) => events.size > 1).length;

    // Nothing charged, paid out or credited twice: the processor's and the ledger's own records.
    const doubledCharges = await db.query(
      `select reference from sandbox_operations where operation = 'authorization' and state = 'approved'
       group by reference having count(*) > 1`,
    );
    const doubledPayouts = await db.query(
      `select reference from sandbox_operations where operation = 'payout' and state = 'paid'
       group by reference having count(*) > 1`,
    );
    const doubledLedger = await db.query(
      'select reference, step from ledger_entries group by wallet_id, reference, step having count(*) > 1',
    );
    const doubledDeposits = await db.query(
      'select tx_hash from crypto_deposits group by transaction_id, tx_hash having count(*) > 1',
    );
    // Wallet balances equal their ledgers.
    const walletsOff = await db.query(
      `select w.id from wallets w left join ledger_entries l on l.wallet_id = w.id
       where w.merchant_id = $1 group by w.id, w.available having w.available <> coalesce(sum(l.amount), 0)`,
      [merchantId],
    );
    return {
      transactions: created.length,
      byStatus,
      notFinal,
      lost: created.length - rows.length,
      duplicatedEffects:
        doubledCharges.rowCount! +
        doubledPayouts.rowCount! +
        doubledLedger.rowCount! +
        doubledDeposits.rowCount! +
        eventsWithTwoIds,
      walletsOff: walletsOff.rowCount!,
      webhooksMissing,
      webhookRedeliveries: receiver.acknowledged.length - acked.size,
    } satisfies Verdict;
  } finally {
    await db.end();
  }
}

export function report(tag: string, title: string, verdict: Verdict, extra: Record<string, unknown>) {
  process.stdout.write(
    `\n[${tag}] ${title}\n${JSON.stringify({ ...verdict, notFinal: verdict.notFinal.length, ...extra }, null, 2)}\n`,
  );
}

export function expectClean(verdict: Verdict) {
  expect(verdict.notFinal).toEqual([]);
  expect(verdict.lost).toBe(0);
  expect(verdict.duplicatedEffects).toBe(0);
  expect(verdict.walletsOff).toBe(0);
  expect(verdict.webhooksMissing).toBe(0);
  expect(verdict.byStatus).toEqual({ SUCCESS: verdict.transactions });
}

/**
 * Reconciliation over everything the run did (docs/reconciliation.md): every leg over all of time, against
 * the deployment's Postgres and Temporal. A clean run finds no break; each one found is printed.
 */
export async function reconcileAll(
  databaseUrl: string,
  temporalAddress: string,
  masterKey: string,
  taskQueue = 'payments',
) {
  const database = createDatabase(databaseUrl, 2);
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    const client = new Client({ connection });
    const scope = { from: new Date(0), to: new Date(), transactionIds: [], references: [] };
    const found: string[] = [];
    for (const leg of reconciliationLegs(database.db, { temporal: { client, taskQueue }, masterKey }))
      for (const f of await leg.check(scope))
        found.push(`${leg.source}/${f.kind}/${f.reference}: ${f.message}`);
    return found;
  } finally {
    await connection.close();
    await database.close();
  }
}
