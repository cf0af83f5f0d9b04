import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asc, like } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { merchantClient, payoutRequest, type MerchantClient } from '../helpers/merchant-client';
import { lateLandings, untilSucceeded } from '../helpers/late-landings';
import { sandboxPayouts } from '../../activities/connectors/sandbox-payouts';
import type { PayoutProcessor, PayoutRequest } from '../../activities/connectors/types';
import { createMerchant } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import { ledgerEntries, sandboxOperations } from '../../src/db/schema/index';
import { SEND_DEADLINE_MS } from '../../src/contracts';

/**
 * A payout send whose answer is lost while the request itself is still on its way to the processor, where
 * it lands later: the workflow must not take the processor's "not found" for a send that never happened
 * and pay through the next terminal while the first may still pay (docs/reliability.md). Each send carries
 * a deadline past which the processor refuses it, and the workflow asks again only once it has passed.
 * Real time: about `SEND_LANDS_WITHIN_MS` per test.
 */
let env: TestEnv;
let merchant: MerchantClient;
const landings = lateLandings();

beforeAll(async () => {
  // The sandbox processor on the test database (made once the database exists).
  const processor = () => sandboxPayouts(env.database.db);
  const lateFirstTerminal: PayoutProcessor = {
    send: async (request: PayoutRequest) => {
      // The first terminal's request is under way when its answer is lost; it lands later.
      landings.intercept(request, () => processor().send(request));
      return processor().send(request);
    },
    confirm: (request) => processor().confirm(request),
    lookup: (request) => processor().lookup(request),
  };
  env = await startTestEnv({}, { payoutConnectors: { 'sandbox-payouts': lateFirstTerminal } });
  const credentials = await createMerchant(env.database.db, env.config.MASTER_KEY, {
    name: 'Two payout terminals',
    wallets: [{ currency: 'USD', amount: 100_000n }],
    terminals: [
      ...SANDBOX_TERMINALS,
      { connector: 'sandbox-payouts', kinds: ['payout'], priority: 50, descriptor: 'SANDBOX*P2' },
    ],
    liveSandbox: true,
  });
  merchant = merchantClient(env.app, credentials);
  landings.useFirstTerminal(credentials, 'payout');
});
afterAll(async () => {
  await landings.landed();
  await env?.close();
});

async function payoutLandingAfter(amount: number, delay: number) {
  const walletId = merchant.credentials.wallets.find((w) => w.mode === 'test')!.wallet_id;
  landings.landAfter(BigInt(amount), delay);
  const created = await merchant.post('/api/v1/test/payout', payoutRequest(walletId, { amount }));
  const id = (created.json() as { data: { transaction_id: string } }).data.transaction_id;
  await untilSucceeded(merchant, id);
  // Its first request was the one lost and landed late (the retry sends the same key again).
  expect(landings.lost(BigInt(amount))).toBeGreaterThanOrEqual(1);
  await landings.landed();
  const books = await env.database.db
    .select({ key: sandboxOperations.idempotencyKey, state: sandboxOperations.state })
    .from(sandboxOperations)
    .where(like(sandboxOperations.idempotencyKey, `${id}:%`))
    .orderBy(asc(sandboxOperations.idempotencyKey));
  const ledger = await env.database.db
    .select({ step: ledgerEntries.step, amount: ledgerEntries.amount })
    .from(ledgerEntries)
    .where(like(ledgerEntries.reference, id))
    .orderBy(asc(ledgerEntries.id));
  return { books, ledger, amount: BigInt(amount) };
}

describe.concurrent('a payout send that lands after its answer was lost', () => {
  it(
    'is paid once: by the first terminal when its request lands in time, never by the next as well',
    { timeout: 120_000 },
    async () => {
      const { books, ledger } = await payoutLandingAfter(301, 8_000);
      expect(books).toEqual([
        { key: expect.stringMatching(new RegExp(`${landings.firstTerminal}$`)), state: 'paid' },
      ]);
      expect(ledger).toEqual([
        { step: 'reserve', amount: -301n },
        { step: 'settle', amount: 0n },
      ]);
    },
  );

  it(
    'is refused by the processor once past its deadline, and only then goes to the next terminal',
    { timeout: 120_000 },
    async () => {
      const { books, ledger } = await payoutLandingAfter(302, SEND_DEADLINE_MS + 1_000);
      expect(books.map((b) => b.state)).toEqual(['paid']);
      expect(books[0]!.key).not.toMatch(new RegExp(`${landings.firstTerminal}$`));
      expect(ledger).toEqual([
        { step: 'reserve', amount: -302n },
        { step: 'settle', amount: 0n },
      ]);
    },
  );
});
