import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, asc, eq, like } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { lateLandings } from '../helpers/late-landings';
import { sandboxAcquirer } from '../../activities/connectors/sandbox-acquirer';
import type { AuthorizeRequest, CardAcquirer } from '../../activities/connectors/types';
import { sandboxOperations } from '../../src/db/schema/index';
import { SEND_DEADLINE_MS, SEND_LANDS_WITHIN_MS } from '../../src/contracts';

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
/** How long after its send the first terminal's request lands, by the payment's amount. */
const landsAfter = new Map<bigint, number>();
const landings = lateLandings();
let firstTerminal = '';

beforeAll(async () => {
  // The sandbox acquirer on the test database (made once the database exists).
  const sandbox = () => sandboxAcquirer(env.database.db);
  const lateFirstTerminal: CardAcquirer = {
    authorize: async (request: AuthorizeRequest) => {
      const delay = landsAfter.get(request.amountMinor);
      // The first terminal's request is under way when its answer is lost; it lands `delay` later.
      if (delay !== undefined && request.idempotencyKey.endsWith(firstTerminal))
        landings.lose(delay, () => sandbox().authorize(request));
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
  const [first] = credentials.terminals
    .filter((t) => t.mode === 'test' && t.kinds.includes('card'))
    .sort((a, b) => a.priority - b.priority);
  firstTerminal = first!.terminal_id;
});
afterAll(async () => {
  await landings.landed();
  await env?.close();
});

async function paymentLandingAfter(amount: number, delay: number) {
  landsAfter.set(BigInt(amount), delay);
  const created = await merchant.post('/api/v1/test/card', cardRequest({ amount }));
  const id = (created.json() as { data: { transaction_id: string } }).data.transaction_id;
  const status = async () => (await merchant.get(`/api/test/status/${id}`)).json() as { status: string };
  await expect
    .poll(async () => (await status()).status, { timeout: SEND_LANDS_WITHIN_MS + 30_000 })
    .toBe('SUCCESS');
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
        { key: expect.stringMatching(new RegExp(`${firstTerminal}$`)), state: 'approved' },
      ]);
    },
  );

  it(
    'is refused by the acquirer once past its deadline, and only then goes to the next terminal',
    { timeout: 120_000 },
    async () => {
      const authorizations = await paymentLandingAfter(1052, SEND_DEADLINE_MS + 1_000);
      expect(authorizations.map((a) => a.state)).toEqual(['approved']);
      expect(authorizations[0]!.key).not.toMatch(new RegExp(`${firstTerminal}$`));
    },
  );
});
