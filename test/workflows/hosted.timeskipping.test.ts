import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { paymentLinks, paymentTemplates, transactions } from '../../src/db/schema/index';
import { newTransactionId } from '../../src/ciphers/ids';
import { apmPayment } from '../../workflows/apm-payment';
import { paymentLink } from '../../workflows/payment-link';
import { linkUsedUpdate } from '../../src/contracts';
import type { MerchantCredentials } from '../../src/merchants/accounts';

/** The hosted flows' waits, skipped through: an APM page left unanswered, a link nobody pays. */
let ts: TimeSkippingEnv;
let merchant: MerchantCredentials;

beforeAll(async () => {
  ts = await startTimeSkipping();
  merchant = await ts.createMerchant();
});
afterAll(() => ts?.close());

async function insertApm(): Promise<string> {
  const id = newTransactionId();
  await ts.database.db.insert(transactions).values({
    id,
    merchantId: merchant.merchant_id,
    mode: 'test',
    kind: 'apm',
    requestHash: 'fixture',
    message: 'Transaction is being processed.',
    amountMinor: 1050n,
    currency: 'USD',
    customer: { first_name: 'Jane', last_name: 'Doe', email: 'jane@example.com' },
    merchantRedirectUrl: 'https://merchant.example/return',
  });
  return id;
}

async function insertLink(expiresAt: Date): Promise<string> {
  const templateId = `ptm_${newTransactionId().slice(2, 22)}`;
  await ts.database.db.insert(paymentTemplates).values({
    id: templateId,
    merchantId: merchant.merchant_id,
    mode: 'test',
    name: 'Fixture',
    redirectUrl: 'https://merchant.example/return',
  });
  const linkId = `lnk_${newTransactionId().slice(2, 22)}`;
  await ts.database.db.insert(paymentLinks).values({
    id: linkId,
    merchantId: merchant.merchant_id,
    mode: 'test',
    templateId,
    amountMinor: 500n,
    currency: 'USD',
    expiresAt,
  });
  return linkId;
}

describe('hosted flows (time-skipping)', () => {
  it('abandons an APM payment whose method nobody picks, after its timeout', async () => {
    const id = await insertApm();
    const result = await ts.env.client.workflow.execute(apmPayment, {
      workflowId: id,
      taskQueue: ts.taskQueue,
      args: [
        {
          transactionId: id,
          merchantId: merchant.merchant_id,
          mode: 'test',
          amountMinor: '1050',
          currency: 'USD',
          methodPageUrl: `http://payments.test/api/v1/test/apm/${id}`,
          providerPageUrl: `http://payments.test/api/v1/test/apm/provider/${id}`,
          timeoutSeconds: 900,
        },
      ],
    });
    expect(result).toEqual({ status: 'FAILED', message: 'Transaction abandoned.' });
    const [row] = await ts.database.db.select().from(transactions).where(eq(transactions.id, id));
    expect(row).toMatchObject({ status: 'FAILED', redirectUrl: null });
  });

  it('expires a link nobody uses at its expiry, seven days on', async () => {
    // The test server's clock, which earlier skips have moved on from the wall clock.
    const expiresAt = new Date((await ts.env.currentTimeMs()) + 7 * 86_400_000);
    const linkId = await insertLink(expiresAt);
    const handle = await ts.env.client.workflow.start(paymentLink, {
      workflowId: `link-${linkId}`,
      taskQueue: ts.taskQueue,
      args: [{ linkId, expiresAt: expiresAt.toISOString() }],
    });
    expect(await handle.result()).toBe('expired');
    const [link] = await ts.database.db.select().from(paymentLinks).where(eq(paymentLinks.id, linkId));
    expect(link).toMatchObject({ status: 'expired', transactionId: null });
    const history = await handle.fetchHistory();
    const timer = history.events?.find((e) => e.timerStartedEventAttributes);
    // About seven days (the start took a moment of real time).
    expect(Number(timer?.timerStartedEventAttributes?.startToFireTimeout?.seconds)).toBeGreaterThan(
      6 * 86_400,
    );
  });

  it('is used by the first transaction, and says so', async () => {
    const expiresAt = new Date((await ts.env.currentTimeMs()) + 86_400_000);
    const linkId = await insertLink(expiresAt);
    const handle = await ts.env.client.workflow.start(paymentLink, {
      workflowId: `link-${linkId}`,
      taskQueue: ts.taskQueue,
      args: [{ linkId, expiresAt: expiresAt.toISOString() }],
    });
    expect(await handle.executeUpdate(linkUsedUpdate, { args: [{ transactionId: 'PA_first' }] })).toBe(
      'used',
    );
    expect(await handle.result()).toBe('used');
    const [link] = await ts.database.db.select().from(paymentLinks).where(eq(paymentLinks.id, linkId));
    expect(link).toMatchObject({ status: 'used', transactionId: 'PA_first' });
  });
});
