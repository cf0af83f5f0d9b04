import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, asc, eq, like } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { lateLandings, untilSucceeded } from '../helpers/late-landings';
import { sandboxAcquirer } from '../../activities/connectors/sandbox-acquirer';
import type { AuthorizeRequest, CardAcquirer } from '../../activities/connectors/types';
import { sandboxOperations } from '../../src/db/schema/index';
import { SEND_DEADLINE_MS } from '../../src/contracts';

/**
 * A card authorization whose answer is lost while the request itself is still on its way to the acquirer,
 * where it lands later: the workflow must not take the acquirer's "not found" for an authorization that
 * never happened and charge the card at the next terminal while the first may still charge it. Each
 * authorization carries a deadline past which the acquirer refuses it, and the workflow trusts a "not
 * found" only once it has passed (as a payout's send: payout-late-send.test.ts). Real time: about
 * `SEND_LANDS_WITHIN_MS` per test, the two at once.
 */
let env: TestEnv;
let merchant: MerchantClient;
const landings = lateLandings();

beforeAll(async () => {
  // The sandbox acquirer on the test database (made once the database exists).
  const sandbox = () => sandboxAcquirer(env.database.db);
  const lateFirstTerminal: CardAcquirer = {
    authorize: async (request: AuthorizeRequest) => {
      // The first terminal's request is under way when its answer is lost; it lands later.
      landings.intercept(request, () => sandbox().authorize(request));
      return sandbox().authorize(request);
    },
    completeChallenge: (request) => sandbox().completeChallenge(request),
    lookup: (request) => sandbox().lookup(request),
    refund: (request) => sandbox().refund(request),
    cancel: (request) => sandbox().cancel(request),
  };
  env = await startTestEnv({}, { cardConnectors: { 'sandbox-acquirer': lateFirstTerminal } });
  const credentials = await env.createMerchant();
  merchant = merchantClient(env.app, credentials);
  landings.useFirstTerminal(credentials, 'card');
});
afterAll(async () => {
  await landings.landed();
  await env?.close();
});

async function paymentLandingAfter(amount: number, delay: number) {
  landings.landAfter(BigInt(amount), delay);
  const created = await merchant.post('/api/v1/test/card', cardRequest({ amount }));
  const id = (created.json() as { data: { transaction_id: string } }).data.transaction_id;
  await untilSucceeded(merchant, id);
  // Its first request was the one lost and landed late (the retry sends the same key again).
  expect(landings.lost(BigInt(amount))).toBeGreaterThanOrEqual(1);
  await landings.landed();
  const authorizations = await env.database.db
    .select({ key: sandboxOperations.idempotencyKey, state: sandboxOperations.state })
    .from(sandboxOperations)
    .where(
      and(
        like(sandboxOperations.idempotencyKey, `${id}:%`),
        eq(sandboxOperations.operation, 'authorization'),
      ),
    )
    .orderBy(asc(sandboxOperations.idempotencyKey));
  return authorizations;
}

describe.concurrent('a card authorization that lands after its answer was lost', () => {
  it(
    'is charged once: by the first terminal when its request lands in time, never by the next as well',
    { timeout: 120_000 },
    async () => {
      const authorizations = await paymentLandingAfter(1051, 8_000);
      expect(authorizations).toEqual([
        { key: expect.stringMatching(new RegExp(`${landings.firstTerminal}$`)), state: 'approved' },
      ]);
    },
  );

  it(
    'is refused by the acquirer once past its deadline, and only then goes to the next terminal',
    { timeout: 120_000 },
    async () => {
      const authorizations = await paymentLandingAfter(1052, SEND_DEADLINE_MS + 1_000);
      expect(authorizations.map((a) => a.state)).toEqual(['approved']);
      expect(authorizations[0]!.key).not.toMatch(new RegExp(`${landings.firstTerminal}$`));
    },
  );
});
