import Stripe from 'stripe';
import { sql } from 'drizzle-orm';
import { isFinal, type TransactionStatus } from '../../src/lib/vocabulary';
import type { Db } from '../../src/db/client';
import { decryptSecret } from '../../src/ciphers/secrets';
import type { Finding } from '../../src/reconciliation/breaks';
import { textArray, type ReconciliationLeg, type Scope } from '../../src/reconciliation/leg';
import { toStripeAmount } from './stripe-amounts';

interface StripeTerminal extends Record<string, unknown> {
  id: string;
  merchant_id: string;
  mode: string;
  credentials_enc: string;
}

interface OurTransaction extends Record<string, unknown> {
  id: string;
  status: string;
  merchant_id: string;
  mode: string;
  amount_minor: string | null;
  currency: string;
  acquirer_reference: string | null;
}

/**
 * The ledger against Stripe's books (docs/reconciliation.md), account by account (each Stripe terminal's
 * key): every PaymentIntent created in the window that carries our `transaction_id` metadata and took
 * money belongs to a transaction we know, in SUCCESS, for its amount (in Stripe's own decimals) and
 * currency; every paid card payment through a Stripe terminal changed in the window has its succeeded
 * PaymentIntent (read by its id when the window's list did not hold it); and the same both ways for
 * refunds. Read through Stripe's list and retrieve APIs, a page of 100 at a time.
 */
export function stripeLeg(db: Db, options: { masterKey: string; apiUrl?: string }): ReconciliationLeg {
  const api = options.apiUrl ? new URL(options.apiUrl) : undefined;
  const clientOf = (secretKey: string) =>
    new Stripe(secretKey, {
      maxNetworkRetries: 2,
      ...(api
        ? {
            host: api.hostname,
            port: api.port || undefined,
            protocol: api.protocol.replace(':', '') as 'http' | 'https',
          }
        : {}),
    });
  return {
    source: 'stripe',
    async check(scope) {
      const { rows: terminals } = await db.execute<StripeTerminal>(sql`
        select id, merchant_id, mode, credentials_enc from terminals
        where connector = 'stripe' and credentials_enc is not null`);
      // One account may serve several terminals: read it once.
      const accounts = new Map<string, StripeTerminal[]>();
      for (const terminal of terminals) {
        const key = (
          JSON.parse(decryptSecret(terminal.credentials_enc, options.masterKey)) as { secret_key?: string }
        ).secret_key;
        if (key) accounts.set(key, [...(accounts.get(key) ?? []), terminal]);
      }
      const findings: Finding[] = [];
      for (const [key, served] of accounts)
        findings.push(...(await account(db, clientOf(key), served, scope)));
      return findings;
    },
  };
}

async function account(
  db: Db,
  stripe: Stripe,
  terminals: StripeTerminal[],
  scope: Scope,
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const seen = new Map<string, Stripe.PaymentIntent>();
  const created = { gte: Math.floor(scope.from.getTime() / 1000), lt: Math.ceil(scope.to.getTime() / 1000) };
  for await (const intent of stripe.paymentIntents.list({ created, limit: 100 })) {
    const transactionId = intent.metadata?.transaction_id;
    if (transactionId) seen.set(transactionId, intent);
  }
  const terminalIds = terminals.map((t) => t.id);
  const { rows } = await db.execute<OurTransaction>(sql`
    select id, status, merchant_id, mode, amount_minor::text as amount_minor, currency, acquirer_reference
    from transactions
    where kind = 'card' and (id = any(${textArray([...seen.keys()])})
      or (terminal_id = any(${textArray(terminalIds)}) and status = 'SUCCESS'
        and ((updated_at >= ${scope.from} and updated_at < ${scope.to}) or id = any(${textArray(scope.transactionIds)}))))`);
  const ours = new Map(rows.map((t) => [t.id, t]));
  for (const [transactionId, intent] of seen) {
    if (intent.status !== 'succeeded') continue;
    const t = ours.get(transactionId);
    const what = `Stripe PaymentIntent ${intent.id} (succeeded, ${intent.amount} ${intent.currency.toUpperCase()})`;
    if (!t) {
      findings.push({
        reference: intent.id,
        kind: 'missing_in_ledger',
        observed: 'succeeded',
        message: `${what} carries our transaction_id ${transactionId}, but no such card payment exists.`,
      });
      continue;
    }
    findings.push(...compare(t, intent));
  }
  // Paid payments whose PaymentIntent the window's list did not hold: read by the reference we kept.
  for (const t of ours.values()) {
    if (t.status !== 'SUCCESS' || seen.has(t.id)) continue;
    const intent = t.acquirer_reference
      ? await orNone(stripe.paymentIntents.retrieve(t.acquirer_reference))
      : undefined;
    if (!intent || intent.status !== 'succeeded')
      findings.push({
        reference: t.id,
        transactionId: t.id,
        merchantId: t.merchant_id,
        mode: t.mode,
        kind: 'missing_at_source',
        expected: 'succeeded',
        observed: intent?.status ?? 'none',
        message: `Card payment ${t.id} is SUCCESS, but Stripe has no succeeded PaymentIntent for it${intent ? ` (${intent.id} is ${intent.status})` : ''}.`,
      });
    else findings.push(...compare(t, intent));
  }
  findings.push(...(await refunds(db, stripe, terminalIds, scope, created)));
  return findings;
}

interface RefundedTransaction extends Record<string, unknown> {
  id: string;
  merchant_id: string;
  mode: string;
  amount_minor: string | null;
  currency: string;
  acquirer_reference: string | null;
  refunded: boolean;
  refund_reference: string | null;
}

/**
 * Refunds: every refund Stripe made in the window on a PaymentIntent of ours is the one we recorded for
 * its card payment, for the payment's amount; every card payment we refunded through a Stripe terminal in
 * the window has its refund at Stripe, succeeded (read by its id when the window's list did not hold it).
 */
async function refunds(
  db: Db,
  stripe: Stripe,
  terminalIds: string[],
  scope: Scope,
  created: { gte: number; lt: number },
): Promise<Finding[]> {
  const listed = new Map<string, Stripe.Refund>();
  for await (const refund of stripe.refunds.list({ created, limit: 100 })) listed.set(refund.id, refund);
  const intentOf = (refund: Stripe.Refund) =>
    typeof refund.payment_intent === 'string' ? refund.payment_intent : refund.payment_intent?.id;
  const intents = [...listed.values()].flatMap((r) => intentOf(r) ?? []);
  const { rows } = await db.execute<RefundedTransaction>(sql`
    select id, merchant_id, mode, amount_minor::text as amount_minor, currency, acquirer_reference, refunded,
      refund_reference
    from transactions
    where kind = 'card' and (acquirer_reference = any(${textArray(intents)})
      or (terminal_id = any(${textArray(terminalIds)}) and refunded
        and ((refunded_at >= ${scope.from} and refunded_at < ${scope.to}) or id = any(${textArray(scope.transactionIds)}))))`);
  const byIntent = new Map(rows.flatMap((t) => (t.acquirer_reference ? [[t.acquirer_reference, t]] : [])));
  const findings: Finding[] = [];
  const checkAmount = (t: RefundedTransaction, refund: Stripe.Refund) => {
    const expected = t.amount_minor === null ? undefined : toStripeAmount(BigInt(t.amount_minor), t.currency);
    if (expected && 'amount' in expected && expected.amount !== BigInt(refund.amount))
      findings.push({
        reference: refund.id,
        transactionId: t.id,
        merchantId: t.merchant_id,
        mode: t.mode,
        kind: 'amount',
        expected: String(expected.amount),
        observed: String(refund.amount),
        message: `Stripe refund ${refund.id} is for ${refund.amount}, but card payment ${t.id} was for ${expected.amount} (Stripe's units of ${t.currency}).`,
      });
  };
  for (const refund of listed.values()) {
    if (refund.status !== 'succeeded') continue;
    const t = byIntent.get(intentOf(refund) ?? '');
    // A refund of a PaymentIntent we do not know: the PaymentIntent's own break says so when it is ours.
    if (!t) continue;
    const about = { reference: refund.id, transactionId: t.id, merchantId: t.merchant_id, mode: t.mode };
    if (!t.refunded)
      findings.push({
        ...about,
        kind: 'missing_in_ledger',
        expected: 'refunded',
        observed: 'not refunded',
        message: `Stripe refunded card payment ${t.id} (refund ${refund.id}), but we have no refund of it.`,
      });
    else if (t.refund_reference && t.refund_reference !== refund.id)
      findings.push({
        ...about,
        kind: 'duplicate',
        expected: t.refund_reference,
        observed: refund.id,
        message: `Stripe refunded card payment ${t.id} twice: ${refund.id} besides ${t.refund_reference}, the refund we recorded.`,
      });
    else checkAmount(t, refund);
  }
  for (const t of rows) {
    if (!t.refunded || (t.refund_reference && listed.has(t.refund_reference))) continue;
    const refund = t.refund_reference ? await orNone(stripe.refunds.retrieve(t.refund_reference)) : undefined;
    if (!refund || refund.status !== 'succeeded')
      findings.push({
        reference: `refund:${t.id}`,
        transactionId: t.id,
        merchantId: t.merchant_id,
        mode: t.mode,
        kind: 'missing_at_source',
        expected: 'succeeded',
        observed: refund?.status ?? 'none',
        message: `Card payment ${t.id} is refunded, but Stripe has no succeeded refund of it${refund ? ` (${refund.id} is ${refund.status})` : ''}.`,
      });
    else checkAmount(t, refund);
  }
  return findings;
}

/** What Stripe retrieved, or undefined when it has no such object (404); any other error is thrown. */
async function orNone<T>(retrieving: Promise<T>): Promise<T | undefined> {
  try {
    return await retrieving;
  } catch (error) {
    if (error instanceof Stripe.errors.StripeInvalidRequestError && error.statusCode === 404)
      return undefined;
    throw error;
  }
}

function compare(t: OurTransaction, intent: Stripe.PaymentIntent): Finding[] {
  const about = { reference: intent.id, transactionId: t.id, merchantId: t.merchant_id, mode: t.mode };
  const findings: Finding[] = [];
  if (t.status !== 'SUCCESS' && isFinal(t.status as TransactionStatus))
    findings.push({
      ...about,
      kind: 'status',
      expected: 'SUCCESS',
      observed: t.status,
      message: `Stripe PaymentIntent ${intent.id} succeeded, but card payment ${t.id} is ${t.status}.`,
    });
  if (intent.currency.toUpperCase() !== t.currency)
    findings.push({
      ...about,
      kind: 'currency',
      expected: t.currency,
      observed: intent.currency.toUpperCase(),
      message: `Stripe PaymentIntent ${intent.id} is in ${intent.currency.toUpperCase()}, but card payment ${t.id} is in ${t.currency}.`,
    });
  else if (t.amount_minor !== null) {
    const expected = toStripeAmount(BigInt(t.amount_minor), t.currency);
    if ('amount' in expected && expected.amount !== BigInt(intent.amount))
      findings.push({
        ...about,
        kind: 'amount',
        expected: String(expected.amount),
        observed: String(intent.amount),
        message: `Stripe PaymentIntent ${intent.id} is for ${intent.amount}, but card payment ${t.id} is for ${expected.amount} (Stripe's units of ${t.currency}).`,
      });
  }
  return findings;
}
