import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq, like } from 'drizzle-orm';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { openForm, submitForm, withoutCard } from '../helpers/hosted-pages';
import { sandboxOperations } from '../../src/db/schema/index';
import { failureTypes, forceFailUpdate, retryNowUpdate } from '../../src/contracts';

/**
 * Alternative payment methods when the provider's answer is lost or the customer's time runs out: the
 * provider is asked before the payment fails, a payment still open there is closed, and one the customer
 * paid settles. The customer has 3 seconds on each page here.
 */
let env: TestEnv;
let merchant: MerchantClient;
/** Payments whose answers get lost on the way back, after the provider acted on them. */
const loseStart = new Set<string>();
const loseComplete = new Set<string>();
/** Payments the provider answers "still in progress" about while they are here. */
const busy = new Set<string>();
const lost = () => ApplicationFailure.retryable('the answer was lost', failureTypes.outcomeUnknown);

beforeAll(async () => {
  env = await startTestEnv(
    { CARD_CHALLENGE_TIMEOUT_SECONDS: '3' },
    {
      wrap: (activities) => ({
        async startApm(input) {
          const started = await activities.startApm(input);
          if (loseStart.has(input.transactionId)) throw lost();
          return started;
        },
        async completeApm(input) {
          const completed = await activities.completeApm(input);
          if (loseComplete.has(input.paymentKey.split(':')[0]!)) throw lost();
          return completed;
        },
        async lookupApm(input) {
          if (busy.has(input.paymentKey.split(':')[0]!)) return { outcome: 'pending' as const };
          return activities.lookupApm(input);
        },
      }),
    },
  );
  merchant = merchantClient(env.app, await env.createMerchant());
});
afterAll(() => env?.close());

/** An APM payment with the bank method picked: its id and the provider page the customer was sent to. */
async function atTheBank(beforeChoosing?: (id: string) => void) {
  const created = await merchant.post('/api/v1/test/apm', withoutCard(cardRequest()));
  const id = created.json().data.transaction_id as string;
  beforeChoosing?.(id);
  const chosen = await submitForm(env.app, created.json().redirect_url, { method: 'bank_redirect' });
  return { id, provider: chosen.headers.location! };
}

const bookOf = async (id: string) =>
  (
    await env.database.db
      .select()
      .from(sandboxOperations)
      .where(
        and(
          eq(sandboxOperations.connector, 'sandbox-bank'),
          like(sandboxOperations.idempotencyKey, `${id}:%`),
        ),
      )
  )[0];
const statusOf = async (id: string) => (await merchant.get(`/api/test/status/${id}`)).json();
const settles = (id: string) => expect.poll(() => statusOf(id), { timeout: 30_000, interval: 250 });

describe('APM payments, asked before they fail', () => {
  it('asks the provider when the answer to the start was lost, and goes on with the payment it opened', async () => {
    const { id, provider } = await atTheBank((created) => loseStart.add(created));
    expect(provider).toContain(`/api/v1/test/apm/provider/${id}`);
    expect(await statusOf(id)).toMatchObject({ status: 'REDIRECT' });
    const approved = await submitForm(env.app, provider, { decision: 'approve' });
    expect(new URL(approved.headers.location!).searchParams.get('status')).toBe('SUCCESS');
    expect(await bookOf(id)).toMatchObject({ state: 'approved' });
  });

  it('settles a payment the customer approved at the provider though our page never heard of it', async () => {
    const { id } = await atTheBank();
    // The customer paid at the provider; the answer never came back to us.
    await env.database.db
      .update(sandboxOperations)
      .set({ state: 'approved' })
      .where(like(sandboxOperations.idempotencyKey, `${id}:%`));
    await settles(id).toMatchObject({ status: 'SUCCESS', message: 'Transaction processed successfully.' });
  });

  it('closes a payment nobody finished at the provider before it fails as abandoned', async () => {
    const { id, provider } = await atTheBank();
    await settles(id).toMatchObject({ status: 'FAILED', message: 'Transaction abandoned.' });
    expect(await bookOf(id)).toMatchObject({ state: 'declined' });
    // Closed there: a late answer from the customer moves nothing.
    await openForm(env.app, provider);
    expect(await bookOf(id)).toMatchObject({ state: 'declined' });
  });

  it("refuses forceFail while the customer's lost answer is asked for, then ends as the provider says", async () => {
    const { id, provider } = await atTheBank();
    loseComplete.add(id);
    busy.add(id);
    const answered = submitForm(env.app, provider, { decision: 'approve' });
    await settles(id).toMatchObject({
      status: 'PENDING',
      message: 'The outcome is being confirmed with the processor.',
    });
    const handle = env.client.workflow.getHandle(id);
    await expect(
      handle.executeUpdate(forceFailUpdate, { args: [{ reason: 'Stop', actor: 'ops' }] }),
    ).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    busy.delete(id);
    await handle.executeUpdate(retryNowUpdate, { args: [{ actor: 'ops' }] });
    await settles(id).toMatchObject({ status: 'SUCCESS' });
    await answered;
    expect(await bookOf(id)).toMatchObject({ state: 'approved' });
  });
});
