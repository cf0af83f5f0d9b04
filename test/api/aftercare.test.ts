import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, like } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import {
  cardRequest,
  merchantClient,
  payinRequest,
  payoutRequest,
  type MerchantClient,
} from '../helpers/merchant-client';
import { startWebhookReceiver } from '../helpers/webhook-receiver';
import { runCliIn } from '../helpers/cli';
import { opsTrail } from '../../src/transactions/ops-audit';
import { ledgerEntries, sandboxOperations, wallets } from '../../src/db/schema/index';

let env: TestEnv;
let merchant: MerchantClient;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
/** The crypto each payin refund sent back: transaction id and the sends' hashes. */
const cryptoReturned: { transactionId: string; hashes: string[] }[] = [];

beforeAll(async () => {
  env = await startTestEnv(
    {},
    {
      wrap: (real) => ({
        async refundPayment(input) {
          const hashes = await real.refundPayment(input);
          cryptoReturned.push({ transactionId: input.transactionId, hashes });
          return hashes;
        },
      }),
    },
  );
  merchant = merchantClient(env.app, await env.createMerchant());
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await env?.close();
});

const refund = (transactionId: string, reason = 'Customer request') =>
  merchant.postPlain('/api/v1/test/refund?Skip-Encryption=true', { transaction_id: transactionId, reason });
const chargeback = (transactionId: string) =>
  merchant.postPlain('/api/v1/test/chargeback', { transaction_id: transactionId });

async function paidCard(): Promise<string> {
  const created = await merchant.post('/api/v1/test/card', cardRequest({ webhook_url: receiver.url }));
  expect(created.json().status).toBe('SUCCESS');
  return created.json().data.transaction_id;
}

const usdWallet = () =>
  merchant.credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id;

async function available(walletId: string): Promise<bigint> {
  const [wallet] = await env.database.db.select().from(wallets).where(eq(wallets.id, walletId));
  return wallet!.available;
}

async function paidPayin(amount = 40): Promise<string> {
  const created = await merchant.post(
    '/api/v1/test/crypto/payin',
    payinRequest({ amount, webhook_url: receiver.url }),
  );
  const id = created.json().data.transaction_id;
  const paid = await merchant.postPlain(`/api/v1/test/crypto/${id}/deposit`, { amount });
  expect(paid.json()).toMatchObject({ status: 'SUCCESS' });
  return id;
}

/** The webhooks received for a transaction so far, in order, once `count` have arrived. */
async function webhooksOf(transactionId: string, count: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const mine = receiver.received.filter(
      (w) => (w.json.data as { transaction_id: string }).transaction_id === transactionId,
    );
    if (mine.length >= count || Date.now() > deadline) return mine;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const refundsAt = (transactionId: string) =>
  env.database.db
    .select()
    .from(sandboxOperations)
    .where(
      and(
        eq(sandboxOperations.operation, 'refund'),
        like(sandboxOperations.idempotencyKey, `${transactionId}:%`),
      ),
    );

describe('POST /api/v1/{mode}/refund', () => {
  it('refunds a card payment once at the acquirer, in plain JSON as the SDK sends it, and sends the webhook again', async () => {
    const id = await paidCard();
    const refunded = await refund(id);
    expect(refunded.statusCode).toBe(200);
    const body = refunded.json();
    expect(body).toMatchObject({ status: 'SUCCESS', data: { transaction_id: id, refund: { status: true } } });
    expect(new Date(body.data.refund.refund_date).toISOString()).toBe(body.data.refund.refund_date);
    expect((await merchant.get(`/api/test/status/${id}`)).json().data.refund).toEqual(body.data.refund);
    expect(await refundsAt(id)).toHaveLength(1);

    const [first, second] = await webhooksOf(id, 2);
    expect(first!.json).toMatchObject({ event_type: 'status', data: { refund: { status: false } } });
    // The second says what it announces: the refund, not another SUCCESS.
    expect(second!.json).toMatchObject({ event_type: 'refund', data: { refund: body.data.refund } });

    const again = await refund(id);
    expect(again.statusCode).toBe(422);
    expect(again.json().message).toBe('Transaction has already been refunded.');
    expect(await refundsAt(id)).toHaveLength(1);
  });

  it("records the merchant's refund in the transaction's audit trail, with the reason", async () => {
    const id = await paidCard();
    expect((await refund(id, 'Damaged in transit')).statusCode).toBe(200);
    expect(await opsTrail(env.database.db, id)).toEqual([
      expect.objectContaining({
        action: 'refund',
        actor: `merchant:${merchant.credentials.merchant_id}`,
        reason: 'Damaged in transit',
      }),
    ]);
  });

  it('takes the request in the envelope too', async () => {
    const id = await paidCard();
    const refunded = await merchant.post('/api/v1/test/refund', {
      transaction_id: id,
      reason: 'Duplicate order',
    });
    expect(refunded.statusCode).toBe(200);
    expect(refunded.json().data.refund.status).toBe(true);
  });

  it('refunds a payin: the credit leaves the wallet once and the crypto goes back to its sender', async () => {
    const walletId = usdWallet();
    const before = await available(walletId);
    const id = await paidPayin(40);
    expect(await available(walletId)).toBe(before + 4000n);

    const refunded = await refund(id);
    expect(refunded.statusCode).toBe(200);
    expect(refunded.json().data.refund.status).toBe(true);
    expect(await available(walletId)).toBe(before);
    const entries = await env.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.reference, id));
    expect(entries.map((e) => [e.step, e.amount]).sort()).toEqual([
      ['credit', 4000n],
      ['refund', -4000n],
    ]);
    // One deposit, one send back to its sender.
    expect(cryptoReturned.filter((r) => r.transactionId === id)).toEqual([
      { transactionId: id, hashes: [expect.any(String)] },
    ]);
    expect((await webhooksOf(id, 2))[1]!.json.data).toMatchObject({ refund: { status: true } });
    // The status body says how much crypto went back, as the create said how much was asked.
    const status = (await merchant.get(`/api/test/status/${id}`)).json().data;
    expect(status).toMatchObject({ refund_amount: 40 });
    // The interface's crypto payin status carries no chargeback (section 2.1).
    expect(status).not.toHaveProperty('chargeback');
  });

  it('refuses a partial amount instead of refunding in full, and takes the whole one', async () => {
    const id = await paidCard();
    const partial = await merchant.postPlain('/api/v1/test/refund', {
      transaction_id: id,
      reason: 'Half of it',
      amount: 500,
    });
    expect(partial.statusCode).toBe(422);
    expect(partial.json().message).toBe(
      'Partial refunds are not supported: a refund returns the whole amount, so leave amount out.',
    );
    expect(await refundsAt(id)).toHaveLength(0);
    // The whole amount, stated, is a refund like any other.
    const whole = await merchant.postPlain('/api/v1/test/refund', {
      transaction_id: id,
      reason: 'All of it',
      amount: 1050,
    });
    expect(whole.statusCode).toBe(200);
    expect(await refundsAt(id)).toHaveLength(1);
    const notAnObject = await merchant.postPlain('/api/v1/test/refund', []);
    expect(notAnObject.statusCode).toBe(422);
    expect(notAnObject.json().message).toBe('The request body must be a JSON object.');
  });

  it.each([
    [
      'a declined card payment',
      async () => {
        const created = await merchant.post(
          '/api/v1/test/card',
          cardRequest({ card_number: '4000000000000002' }),
        );
        return created.json().data.transaction_id as string;
      },
    ],
    [
      'a payout',
      async () => {
        const created = await merchant.post('/api/v1/test/payout', payoutRequest(usdWallet()));
        return created.json().data.transaction_id as string;
      },
    ],
  ])('refuses %s: "This transaction cannot be refunded."', async (_name, make) => {
    const answer = await refund(await make());
    expect(answer.statusCode).toBe(422);
    expect(answer.json()).toMatchObject({
      message: 'This transaction cannot be refunded.',
      errors: { transaction_id: ['This transaction cannot be refunded.'] },
    });
  });

  it('answers 404 for a transaction of another merchant and 422 without a reason', async () => {
    const other = merchantClient(env.app, await env.createMerchant());
    const id = await paidCard();
    const foreign = await other.postPlain('/api/v1/test/refund', { transaction_id: id, reason: 'x' });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().message).toBe('Transaction not found.');
    const noReason = await merchant.postPlain('/api/v1/test/refund', { transaction_id: id });
    expect(noReason.statusCode).toBe(422);
    expect(noReason.json().errors.reason).toBeDefined();
  });
});

describe('chargebacks', () => {
  it('refuses a chargeback after a refund, and a refund after a chargeback', async () => {
    const refundedFirst = await paidCard();
    expect((await refund(refundedFirst)).statusCode).toBe(200);
    const late = await chargeback(refundedFirst);
    expect(late.statusCode).toBe(422);
    expect(late.json().message).toBe('Transaction has already been refunded.');

    const chargedFirst = await paidCard();
    const charged = await chargeback(chargedFirst);
    expect(charged.statusCode).toBe(200);
    expect(charged.json().data.chargeback).toMatchObject({ status: true });
    expect(charged.json().data.refund.status).toBe(false);
    const [, webhook] = await webhooksOf(chargedFirst, 2);
    expect(webhook!.json.data).toMatchObject({ chargeback: { status: true } });
    const after = await refund(chargedFirst);
    expect(after.statusCode).toBe(422);
    expect(after.json().message).toBe('Transaction has already been charged back.');
    expect(await refundsAt(chargedFirst)).toHaveLength(0);
  });

  it("takes a payin's credit back out of the wallet", async () => {
    const walletId = usdWallet();
    const id = await paidPayin(25);
    const credited = await available(walletId);
    const charged = await chargeback(id);
    expect(charged.statusCode).toBe(200);
    // A payin's body carries no chargeback flag (the interface, section 2.1): the webhook sent again and
    // the event log say what happened, and the wallet shows it.
    expect(charged.json().data).not.toHaveProperty('chargeback');
    expect(await available(walletId)).toBe(credited - 2500n);
    const [, webhook] = await webhooksOf(id, 2);
    const events = await merchant.get(`/api/v1/test/webhooks/events?transaction_id=${id}`);
    expect(
      events.json().data.find((e: { event_id: string }) => e.event_id === webhook!.json.event_id),
    ).toMatchObject({ event_type: 'chargeback' });
    // Ops see the exact decimals as the API writes them.
    const shown = await runCliIn(env, 'ops', 'show', id, '--json');
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).not.toContain('"text"');
    expect(shown.stdout).toMatch(/"crypto_paid_amount":25[,}]/);
  });

  it('refuses to charge back what did not settle, in its own words', async () => {
    const created = await merchant.post(
      '/api/v1/test/card',
      cardRequest({ card_number: '4000000000000002' }),
    );
    const refused = await chargeback(created.json().data.transaction_id);
    expect(refused.statusCode).toBe(422);
    expect(refused.json().message).toBe('This transaction cannot be charged back.');
  });

  it('is recorded by ops with `npx payments ops chargeback`, once', async () => {
    const id = await paidCard();
    const recorded = await runCliIn(env, 'ops', 'chargeback', id, '--actor', 'ops-jane', '--json');
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(JSON.parse(recorded.stdout).data.chargeback.status).toBe(true);
    // The body as the API writes it: minor units as a number.
    expect(JSON.parse(recorded.stdout).data.amount).toBe(1050);
    expect(await opsTrail(env.database.db, id)).toEqual([
      expect.objectContaining({ action: 'chargeback', actor: 'ops-jane', statusBefore: 'SUCCESS' }),
    ]);
    const again = await runCliIn(env, 'ops', 'chargeback', id);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('Transaction has already been charged back.');
    expect(await opsTrail(env.database.db, id)).toHaveLength(1);
  });

  it('is test mode only', async () => {
    const answer = await merchant.postPlain(
      '/api/v1/live/chargeback',
      { transaction_id: 'PA1' },
      { key: merchant.key('live') },
    );
    expect(answer.statusCode).toBe(404);
  });

  it('applies exactly one of a refund and a chargeback that race', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await paidCard();
      const [refunded, charged] = await Promise.all([refund(id), chargeback(id)]);
      expect([refunded.statusCode, charged.statusCode].sort()).toEqual([200, 422]);
      const status = (await merchant.get(`/api/test/status/${id}`)).json().data;
      expect([status.refund.status, status.chargeback.status].filter(Boolean)).toHaveLength(1);
      expect(await refundsAt(id)).toHaveLength(status.refund.status ? 1 : 0);
    }
  });
});
