import { sql } from 'drizzle-orm';
import { isFinal, type TransactionStatus } from '../lib/vocabulary';
import type { Db } from '../db/client';
import { textArray } from './leg';
import type { Finding } from './breaks';
import type { ReconciliationLeg, Scope } from './leg';

const PAGE = 2_000;

/** The states of a processor record that moved money. */
const MOVED = { authorization: 'approved', payout: 'paid', refund: 'refunded' } as const;

interface BookRow extends Record<string, unknown> {
  idempotency_key: string;
  connector: string;
  operation: keyof typeof MOVED;
  state: string;
  transaction_id: string;
  amount_minor: string | null;
  currency: string | null;
  id: string | null;
  status: string | null;
  kind: string | null;
  merchant_id: string | null;
  mode: string | null;
  t_amount: string | null;
  t_currency: string | null;
  refunded: boolean | null;
  moved_for_transaction: number;
}

/**
 * The ledger against the sandbox processors' books (the sandbox acquirer, payout processor and payment
 * methods keep them in `sandbox_operations`, as a real processor keeps its own): every record that moved
 * money belongs to a transaction we know, in its status, for its amount and currency, and at most one per
 * transaction; every final transaction through a sandbox terminal that says money moved has its record.
 */
export function sandboxLeg(db: Db): ReconciliationLeg {
  return {
    source: 'sandbox',
    async check(scope) {
      return [...(await booksAgainstLedger(db, scope)), ...(await ledgerAgainstBooks(db, scope))];
    },
  };
}

async function booksAgainstLedger(db: Db, scope: Scope): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (let after = ''; ;) {
    const { rows } = await db.execute<BookRow>(sql`
      select o.idempotency_key, o.connector, o.operation, o.state, o.transaction_id,
        o.amount_minor::text as amount_minor, o.currency,
        t.id, t.status, t.kind, t.merchant_id, t.mode, t.amount_minor::text as t_amount, t.currency as t_currency,
        t.refunded,
        (select count(*)::int from sandbox_operations m
          where m.transaction_id = o.transaction_id and m.operation = o.operation and m.state = o.state)
          as moved_for_transaction
      from sandbox_operations o
      left join transactions t on t.id = o.transaction_id
      where o.idempotency_key > ${after}
        and o.transaction_id is not null
        and ((o.operation = 'authorization' and o.state = ${MOVED.authorization})
          or (o.operation = 'payout' and o.state = ${MOVED.payout})
          or (o.operation = 'refund' and o.state = ${MOVED.refund}))
        and ((o.updated_at >= ${scope.from} and o.updated_at < ${scope.to})
          or o.transaction_id = any(${textArray(scope.transactionIds)}) or o.idempotency_key = any(${textArray(scope.references)}))
      order by o.idempotency_key
      limit ${PAGE}`);
    for (const record of rows) findings.push(...recordAgainstLedger(record));
    if (rows.length < PAGE) return findings;
    after = rows.at(-1)!.idempotency_key;
  }
}

function recordAgainstLedger(o: BookRow): Finding[] {
  const what = `${o.connector}'s ${o.operation} ${o.idempotency_key} (${o.state}${o.amount_minor ? ` ${o.amount_minor} ${o.currency}` : ''})`;
  if (!o.id)
    return [
      {
        reference: o.idempotency_key,
        kind: 'missing_in_ledger',
        observed: o.state,
        message: `The ${what} carries our key, but no transaction ${o.transaction_id} exists: money moved that the ledger does not know.`,
      },
    ];
  const about = { transactionId: o.id, merchantId: o.merchant_id!, mode: o.mode! };
  const findings: Finding[] = [];
  const final = isFinal(o.status as TransactionStatus);
  if (o.operation === 'refund' ? !o.refunded && final : final && o.status !== 'SUCCESS')
    findings.push({
      ...about,
      reference: o.idempotency_key,
      kind: 'status',
      expected: o.operation === 'refund' ? 'refunded' : 'SUCCESS',
      observed: o.operation === 'refund' ? 'not refunded' : o.status!,
      message: `The ${what} moved money, but transaction ${o.id} is ${o.operation === 'refund' ? 'not refunded' : o.status}.`,
    });
  if (o.amount_minor !== null && o.t_amount !== null && o.amount_minor !== o.t_amount)
    findings.push({
      ...about,
      reference: o.idempotency_key,
      kind: 'amount',
      expected: o.t_amount,
      observed: o.amount_minor,
      message: `The ${what} is for ${o.amount_minor}, but transaction ${o.id} is for ${o.t_amount} (minor units).`,
    });
  if (o.currency !== null && o.t_currency !== null && o.currency !== o.t_currency)
    findings.push({
      ...about,
      reference: o.idempotency_key,
      kind: 'currency',
      expected: o.t_currency,
      observed: o.currency,
      message: `The ${what} is in ${o.currency}, but transaction ${o.id} is in ${o.t_currency}.`,
    });
  if (o.operation !== 'refund' && o.moved_for_transaction > 1)
    findings.push({
      ...about,
      reference: o.id,
      kind: 'duplicate',
      expected: '1',
      observed: String(o.moved_for_transaction),
      message: `Transaction ${o.id} moved money ${o.moved_for_transaction} times at the sandbox ${o.operation === 'payout' ? 'payout processor' : 'acquirer'}.`,
    });
  return findings;
}

/** Final transactions through sandbox terminals whose money moved, without the record that moved it. */
async function ledgerAgainstBooks(db: Db, scope: Scope): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (let after = ''; ;) {
    const { rows } = await db.execute<{
      id: string;
      kind: string;
      status: string;
      merchant_id: string;
      mode: string;
      refunded: boolean;
      moved: boolean;
      refund_recorded: boolean;
    }>(sql`
      select t.id, t.kind, t.status, t.merchant_id, t.mode, t.refunded,
        exists (select 1 from sandbox_operations o where o.transaction_id = t.id
          and ((o.operation = 'authorization' and o.state = ${MOVED.authorization})
            or (o.operation = 'payout' and o.state = ${MOVED.payout}))) as moved,
        exists (select 1 from sandbox_operations o where o.transaction_id = t.id
          and o.operation = 'refund' and o.state = ${MOVED.refund}) as refund_recorded
      from transactions t
      join terminals r on r.id = t.terminal_id
      where t.id > ${after}
        and r.connector like 'sandbox-%'
        and t.kind in ('card', 'apm', 'payout')
        and t.status in ('SUCCESS', 'FAILED', 'BLOCKED')
        and ((t.updated_at >= ${scope.from} and t.updated_at < ${scope.to}) or t.id = any(${textArray(scope.transactionIds)}))
      order by t.id
      limit ${PAGE}`);
    for (const t of rows) {
      const about = { transactionId: t.id, merchantId: t.merchant_id, mode: t.mode };
      if (t.status === 'SUCCESS' && !t.moved)
        findings.push({
          ...about,
          reference: t.id,
          kind: 'missing_at_source',
          expected: t.kind === 'payout' ? 'paid' : 'approved',
          observed: 'none',
          message: `Transaction ${t.id} (${t.kind}) is SUCCESS, but the sandbox processor has no record that moved its money.`,
        });
      if (t.refunded && !t.refund_recorded)
        findings.push({
          ...about,
          reference: `${t.id}:refund`,
          kind: 'missing_at_source',
          expected: 'refunded',
          observed: 'none',
          message: `Transaction ${t.id} is refunded, but the sandbox acquirer has no record of the refund.`,
        });
    }
    if (rows.length < PAGE) return findings;
    after = rows.at(-1)!.id;
  }
}
