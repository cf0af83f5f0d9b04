import { sql } from 'drizzle-orm';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { Db } from '../db/client';
import { isFinal as isFinalStatus, type TransactionStatus } from '../lib/vocabulary';
import { fiatValue, type LockedRate } from '../lib/settlement';
import { parseUnits } from '../lib/units';
import { searchAttributes } from '../contracts';
import type { Finding } from './breaks';
import { isStale, textArray, type ReconciliationLeg, type Scope } from './leg';

/** The workflow types that carry one transaction each (their id is the transaction id). */
const TRANSACTION_WORKFLOWS = ['cardPayment', 'cardPayout', 'cryptoPayin', 'cryptoRamp', 'apmPayment'];

/** How many rows one query of a window reads at a time. */
const PAGE = 2_000;

const isFinal = (status: string) => isFinalStatus(status as TransactionStatus);

interface Entry {
  wallet: string;
  step: string;
  amount: string;
}

interface TransactionRow extends Record<string, unknown> {
  id: string;
  kind: string;
  status: string;
  merchant_id: string;
  mode: string;
  wallet_id: string | null;
  currency: string;
  refunded: boolean;
  chargeback: boolean;
  workflow_input: { crypto?: LockedRate } | null;
  details: { crypto_payment_status?: string } | null;
  webhook_url: string | null;
  has_event: boolean;
  paid: string[] | null;
  entries: Entry[];
}

/** Units of a crypto amount kept as an exact decimal (`numeric`), at the asset's decimals. */
function unitsOf(amount: string, decimals: number): bigint {
  const trimmed = amount.includes('.') ? amount.replace(/0+$/, '').replace(/\.$/, '') : amount;
  return parseUnits(trimmed, decimals) ?? 0n;
}

/**
 * The ledger against itself and the workflows (docs/reconciliation.md): every wallet's balance is the sum of
 * its entries; every entry belongs to a transaction, a wallet's opening or an audited credit; every final
 * transaction has exactly the ledger steps its status implies and, with a webhook URL, its event; and every
 * transaction's status is its workflow's, with none waiting past its kind's deadline.
 */
export function ledgerLeg(db: Db, temporal?: { client: Client; taskQueue: string }): ReconciliationLeg {
  return {
    source: 'ledger',
    async check(scope) {
      return [
        ...(await walletBalances(db)),
        ...(await entriesWithoutSource(db, scope)),
        ...(await transactionSteps(db, scope)),
        ...(temporal ? await workflowsAgainstProjection(db, temporal, scope) : []),
      ];
    },
  };
}

/** Every wallet's available balance equals the sum of its entries (one set-based pass over the ledger). */
async function walletBalances(db: Db): Promise<Finding[]> {
  const { rows } = await db.execute<{
    id: string;
    merchant_id: string;
    mode: string;
    currency: string;
    available: string;
    total: string;
  }>(sql`
    select w.id, w.merchant_id, w.mode, w.currency, w.available::text as available, coalesce(s.total, 0)::text as total
    from wallets w
    left join (select wallet_id, sum(amount) as total from ledger_entries group by wallet_id) s on s.wallet_id = w.id
    where w.available <> coalesce(s.total, 0)`);
  return rows.map((w) => ({
    reference: w.id,
    kind: 'amount',
    merchantId: w.merchant_id,
    mode: w.mode,
    expected: `${w.total} ${w.currency}`,
    observed: `${w.available} ${w.currency}`,
    message: `Wallet ${w.id} shows ${w.available} available, but its ledger entries sum to ${w.total} (minor units of ${w.currency}).`,
  }));
}

/** Entries made in the window whose reference is no transaction of their wallet, opening or audited credit. */
async function entriesWithoutSource(db: Db, scope: Scope): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (let after = 0; ;) {
    const { rows } = await db.execute<{
      id: number;
      wallet_id: string;
      reference: string;
      step: string;
      amount: string;
      merchant_id: string;
      mode: string;
      currency: string;
    }>(sql`
      select e.id, e.wallet_id, e.reference, e.step, e.amount::text as amount, w.merchant_id, w.mode, w.currency
      from ledger_entries e
      join wallets w on w.id = e.wallet_id
      where e.id > ${after}
        and ((e.created_at >= ${scope.from} and e.created_at < ${scope.to})
          or (e.wallet_id || ':' || e.reference || ':' || e.step) = any(${textArray(scope.references)}))
        and not exists (select 1 from transactions t where t.id = e.reference)
        and e.reference <> 'opening_' || e.wallet_id
        and not exists (
          select 1 from audit_log a
          where a.action = 'wallet.credit' and a.details->>'walletId' = e.wallet_id
            and a.details->>'reference' = e.reference)
      order by e.id
      limit ${PAGE}`);
    for (const e of rows)
      findings.push({
        reference: `${e.wallet_id}:${e.reference}:${e.step}`,
        kind: 'missing_at_source',
        merchantId: e.merchant_id,
        mode: e.mode,
        observed: `${e.step} ${e.amount} ${e.currency}`,
        message: `Ledger entry ${e.id} (${e.step} of ${e.amount} ${e.currency} to wallet ${e.wallet_id}, reference ${e.reference}) belongs to no transaction, wallet opening or audited credit.`,
      });
    if (rows.length < PAGE) return findings;
    after = rows.at(-1)!.id;
  }
}

/**
 * Final transactions changed in the window: the ledger steps their status implies (a paid payout settled,
 * a failed one released, a paid payin credited with the fiat value of its counted deposits, a refund or
 * chargeback debited once, nothing for the kinds that never touch a wallet) and, with a webhook URL, the
 * event of their status.
 */
async function transactionSteps(db: Db, scope: Scope): Promise<Finding[]> {
  const findings: Finding[] = [];
  for (let after = ''; ;) {
    const { rows } = await db.execute<TransactionRow>(sql`
      select t.id, t.kind, t.status, t.merchant_id, t.mode, t.wallet_id, t.currency, t.refunded, t.chargeback,
        t.workflow_input, t.details, t.webhook_url,
        exists (select 1 from webhook_events v where v.transaction_id = t.id and v.event_key = 'status:' || t.status)
          as has_event,
        (select array_agg(d.amount::text) from crypto_deposits d
          where d.transaction_id = t.id and d.counted_in_payment) as paid,
        coalesce((select json_agg(json_build_object('wallet', e.wallet_id, 'step', e.step, 'amount', e.amount::text))
          from ledger_entries e where e.reference = t.id), '[]'::json) as entries
      from transactions t
      where t.id > ${after}
        and t.status in ('SUCCESS', 'FAILED', 'BLOCKED')
        and ((t.updated_at >= ${scope.from} and t.updated_at < ${scope.to}) or t.id = any(${textArray(scope.transactionIds)}))
      order by t.id
      limit ${PAGE}`);
    for (const t of rows) findings.push(...stepsOf(t));
    if (rows.length < PAGE) return findings;
    after = rows.at(-1)!.id;
  }
}

function stepsOf(t: TransactionRow): Finding[] {
  const about = { transactionId: t.id, merchantId: t.merchant_id, mode: t.mode };
  const findings: Finding[] = [];
  const own = t.entries.filter((e) => e.wallet === t.wallet_id);
  for (const stray of t.entries.filter((e) => e.wallet !== t.wallet_id))
    findings.push({
      ...about,
      reference: `${stray.wallet}:${t.id}:${stray.step}`,
      kind: 'duplicate',
      expected: t.wallet_id ? `wallet ${t.wallet_id}` : 'no wallet',
      observed: `${stray.step} ${stray.amount} in wallet ${stray.wallet}`,
      message: `Transaction ${t.id} has a ${stray.step} of ${stray.amount} in wallet ${stray.wallet}, which is not its wallet: a second run's step?`,
    });
  const step = (name: string) => own.find((e) => e.step === name);
  const steps = own.map((e) => e.step).sort();
  const mismatch = (kind: Finding['kind'], expected: string, message: string): void => {
    findings.push({
      ...about,
      reference: t.id,
      kind,
      expected,
      observed: steps.join(', ') || 'none',
      message,
    });
  };

  if (t.kind === 'payout') {
    const reserve = step('reserve');
    if (t.status === 'SUCCESS') {
      if (!reserve || !step('settle'))
        mismatch(
          'missing_in_ledger',
          'reserve, settle',
          `Payout ${t.id} is SUCCESS but its funds were not reserved and settled.`,
        );
      else if (step('release'))
        mismatch(
          'duplicate',
          'reserve, settle',
          `Payout ${t.id} is SUCCESS but its funds were both settled and released.`,
        );
    } else if (step('settle')) {
      mismatch(
        'status',
        'no settle',
        `Payout ${t.id} is ${t.status} but its funds were settled (they left the wallet).`,
      );
    } else if (reserve && !step('release')) {
      mismatch(
        'missing_in_ledger',
        'reserve, release',
        `Payout ${t.id} is ${t.status} but its reserve of ${-BigInt(reserve.amount)} is still held.`,
      );
    }
    const release = step('release');
    if (reserve && release && BigInt(release.amount) !== -BigInt(reserve.amount))
      mismatch(
        'amount',
        `release ${-BigInt(reserve.amount)}`,
        `Payout ${t.id} released ${release.amount}, not the ${-BigInt(reserve.amount)} it reserved.`,
      );
    return findings;
  }

  if (t.kind === 'crypto_payin') {
    const credit = step('credit');
    if (t.status !== 'SUCCESS') {
      if (credit && !step('refund') && !step('chargeback'))
        mismatch(
          'status',
          'no credit',
          `Payin ${t.id} is ${t.status} but credited ${credit.amount} to its wallet.`,
        );
    } else if (!credit) {
      // Deposits worth less than one minor unit of the currency credit nothing, and the workflow writes no
      // entry of zero.
      if (!creditsFor(t)?.every((amount) => amount === 0n))
        mismatch(
          'missing_in_ledger',
          'credit',
          `Payin ${t.id} is SUCCESS but its wallet was never credited.`,
        );
    } else {
      const allowed = creditsFor(t);
      if (allowed && !allowed.includes(BigInt(credit.amount)))
        findings.push({
          ...about,
          reference: t.id,
          kind: 'amount',
          expected: allowed.join(' or '),
          observed: credit.amount,
          message: `Payin ${t.id} credited ${credit.amount}, but its counted deposits are worth ${allowed.join(' or ')} (minor units of ${t.currency}).`,
        });
    }
    for (const reversal of ['refund', 'chargeback'] as const) {
      const flagged = reversal === 'refund' ? t.refunded : t.chargeback;
      const entry = step(reversal);
      if (flagged && credit && !entry)
        mismatch(
          'missing_in_ledger',
          reversal,
          `Payin ${t.id} was ${reversal === 'refund' ? 'refunded' : 'charged back'} but its credit was never taken back.`,
        );
      if (entry && credit && BigInt(entry.amount) !== -BigInt(credit.amount))
        mismatch(
          'amount',
          `${reversal} ${-BigInt(credit.amount)}`,
          `Payin ${t.id}'s ${reversal} took back ${-BigInt(entry.amount)}, not its credit of ${credit.amount}.`,
        );
    }
  } else if (own.length > 0) {
    mismatch(
      'missing_at_source',
      'none',
      `Transaction ${t.id} (${t.kind}) has ledger steps, but its kind never touches a wallet.`,
    );
  }

  if (t.webhook_url && !t.has_event)
    findings.push({
      ...about,
      reference: t.id,
      kind: 'missing_event',
      expected: `status:${t.status}`,
      observed: 'none',
      message: `Transaction ${t.id} is ${t.status} with a webhook URL, but no webhook event of that status was made.`,
    });
  return findings;
}

/**
 * What a paid payin may have credited: the locked fiat amount when paid in full, the fiat value of what was
 * paid when underpaid, either when overpaid (by the merchant's overpayment policy when it opened).
 */
function creditsFor(t: TransactionRow): bigint[] | undefined {
  const rate = t.workflow_input?.crypto;
  const status = t.details?.crypto_payment_status;
  if (!rate || !status) return undefined;
  const paid = (t.paid ?? []).reduce((sum, amount) => sum + unitsOf(amount, rate.decimals), 0n);
  const full = BigInt(rate.fiatMinor);
  if (status === 'FULLPAID') return [full];
  if (status === 'UNDERPAID') return [fiatValue(paid, rate)];
  return [full, fiatValue(paid, rate)];
}

/** How a run of a transaction's workflow stands: its execution status and the status it last set. */
interface RunState {
  status: string;
  outcome?: string;
}

const stateOf = (info: Pick<WorkflowExecutionInfo, 'status' | 'typedSearchAttributes'>): RunState => ({
  status: info.status.name,
  outcome: info.typedSearchAttributes.get(searchAttributes.status),
});

/**
 * The projection against the workflows: the service's run of every transaction workflow that closed in the
 * window left its transaction in the status it ended on (a run terminated by hand leaves it waiting, its
 * reserve held); a transaction still waiting past its kind's deadline at the cut-off is stale, or its run
 * is gone. Only the run the service bound counts (`transactions.run_id`): a run started by hand under the
 * same id decides nothing, here as everywhere.
 */
async function workflowsAgainstProjection(
  db: Db,
  temporal: { client: Client; taskQueue: string },
  scope: Scope,
): Promise<Finding[]> {
  const at = (date: Date) => date.toISOString();
  const types = TRANSACTION_WORKFLOWS.map((type) => `'${type}'`).join(', ');
  const query =
    `TaskQueue = '${temporal.taskQueue}' AND WorkflowType IN (${types}) AND ` +
    `CloseTime >= '${at(scope.from)}' AND CloseTime < '${at(scope.to)}'`;
  const closedRuns = new Map<string, RunState>();
  const candidates = new Set<string>(scope.transactionIds);
  for await (const info of temporal.client.workflow.list({ query, pageSize: PAGE })) {
    closedRuns.set(info.runId, stateOf(info));
    candidates.add(info.workflowId);
  }
  // Final transactions changed in the window whose bound run the list did not hold (Temporal's visibility
  // lags its history a little, and a projection may have been edited): their run is asked for by its id.
  for (let after = ''; ;) {
    const { rows: changed } = await db.execute<{ id: string; run_id: string | null }>(sql`
      select id, run_id from transactions
      where id > ${after} and status in ('SUCCESS', 'FAILED', 'BLOCKED')
        and updated_at >= ${scope.from} and updated_at < ${scope.to}
        and run_chain is distinct from 'legacy'
      order by id
      limit ${PAGE}`);
    for (const t of changed) if (!t.run_id || !closedRuns.has(t.run_id)) candidates.add(t.id);
    if (changed.length < PAGE) break;
    after = changed.at(-1)!.id;
  }
  // Waiting transactions past their kind's deadline at the cut-off (few: only those in flight).
  const { rows: late } = await db.execute<{ id: string; kind: string; created_at: Date }>(sql`
    select id, kind, created_at from transactions
    where status in ('PENDING', 'REDIRECT') and created_at < ${scope.to}`);
  for (const t of late) if (isStale(t.kind, new Date(t.created_at), scope.to)) candidates.add(t.id);
  if (candidates.size === 0) return [];

  const findings: Finding[] = [];
  const { rows } = await db.execute<{
    id: string;
    kind: string;
    status: TransactionStatus;
    merchant_id: string;
    mode: string;
    run_id: string | null;
    created_at: Date;
    held: string | null;
  }>(sql`
    select t.id, t.kind, t.status, t.merchant_id, t.mode, t.run_id, t.created_at,
      (select (-e.amount)::text from ledger_entries e where e.reference = t.id and e.step = 'reserve'
        and not exists (select 1 from ledger_entries x where x.reference = t.id and x.step in ('release', 'settle'))) as held
    from transactions t where t.id = any(${textArray([...candidates])})`);
  for (const t of rows) {
    const run =
      (t.run_id ? closedRuns.get(t.run_id) : undefined) ??
      (await temporal.client.workflow
        .getHandle(t.id, t.run_id ?? undefined)
        .describe()
        .then(stateOf, () => ({ status: 'NOT_FOUND' }) as RunState));
    const about = { reference: t.id, transactionId: t.id, merchantId: t.merchant_id, mode: t.mode };
    const ended = run.status === 'COMPLETED' ? run.outcome : undefined;
    if (run.status === 'RUNNING') {
      const since = new Date(t.created_at);
      if (!isFinal(t.status) && isStale(t.kind, since, scope.to))
        findings.push({
          ...about,
          kind: 'stale_pending',
          expected: 'final',
          observed: t.status,
          message: `Transaction ${t.id} (${t.kind}) has been ${t.status} since ${since.toISOString()}, past its kind's deadline.`,
        });
    } else if (!isFinal(t.status)) {
      findings.push({
        ...about,
        kind: 'status',
        expected: ended ?? 'final',
        observed: t.status,
        message:
          `The workflow of ${t.id} ended ${run.status}${ended ? ` on ${ended}` : ''}, but the transaction is still ${t.status}` +
          (t.held ? `, its reserve of ${t.held} held.` : '.'),
      });
    } else if (ended && isFinal(ended) && ended !== t.status) {
      findings.push({
        ...about,
        kind: 'status',
        expected: ended,
        observed: t.status,
        message: `Transaction ${t.id} shows ${t.status}, but its workflow ended ${ended}.`,
      });
    }
  }
  return findings;
}
