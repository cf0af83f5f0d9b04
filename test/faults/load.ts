import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import type { DevInstance } from '../../src/platform/dev-instance';
import {
  encryptForMerchant,
  cardRequest,
  payinRequest,
  payoutRequest,
  rampRequest,
} from '../helpers/merchant-client';

export interface Merchant {
  testKey: string;
  encryptionKey: string;
  usdWallet: string;
}

/** What the load needs of a merchant's credentials: its test key, encryption key and test USD wallet. */
export function loadMerchant(credentials: MerchantCredentials): Merchant {
  return {
    testKey: credentials.test_secret_key,
    encryptionKey: credentials.encryption_key,
    usdWallet: credentials.wallets.find((w) => w.mode === 'test' && w.currency === 'USD')!.wallet_id,
  };
}

/** Where the `npm run dev` of data folder `dir` runs (its database, Temporal, API), as it wrote it. */
export function devInstanceIn(dir: string): DevInstance {
  return JSON.parse(readFileSync(join(dir, 'dev-instance.json'), 'utf8')) as DevInstance;
}

/** The sandbox merchant `npm run dev` wrote to its data folder `dir`. */
export function devSandboxMerchant(dir: string): MerchantCredentials {
  return JSON.parse(readFileSync(join(dir, 'sandbox-merchant.json'), 'utf8')) as MerchantCredentials;
}

export type Flow = 'card' | 'card-3ds' | 'payout' | 'payin' | 'offramp';

/**
 * The crypto flows pay in an asset `npm run dev` keeps on the sandbox chain (TRX: TRON's node watches its
 * tokens only), whose deposits the load names by hash so a retried request counts once (on a local real
 * chain the transfer gets its own hash).
 */
const SANDBOX_CRYPTO = { crypto_currency: 'TRX', crypto_network: 'TRON' } as const;
export const FLOWS: Flow[] = ['card', 'card-3ds', 'payout', 'payin', 'offramp'];

export interface Created {
  flow: Flow;
  orderId: string;
  transactionId: string;
}

/** How long the cardholder keeps trying to answer a 3-D Secure challenge before the load gives up. */
const CHALLENGE_WAIT_MS = 300_000;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Body = Record<string, unknown> & { status?: string; data?: Record<string, unknown> };

/**
 * One merchant driving the API over HTTP as a real integration would: a create that fails for a
 * technical reason (5xx, connection refused) is sent again with the same order id; a 409 for that order
 * id means the first try went through, and the transaction is found by its order id.
 */
export class LoadClient {
  /** Requests that failed for technical reasons and were tried again. */
  retries = 0;
  /** What each transaction's requests were answered, for the report when one does not end. */
  readonly trail = new Map<string, string[]>();

  private note(transactionId: string, line: string) {
    const lines = this.trail.get(transactionId) ?? [];
    lines.push(`${new Date().toISOString().slice(11, 23)} ${line.slice(0, 300)}`);
    this.trail.set(transactionId, lines);
  }

  constructor(
    private readonly baseUrl: () => string,
    private readonly merchant: Merchant,
    private readonly webhookUrl: string,
  ) {}

  private async call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Body }> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const response = await fetch(`${this.baseUrl()}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${this.merchant.testKey}`,
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await response.text();
        if (response.status >= 500 || response.status === 429)
          throw new Error(`HTTP ${response.status}: ${text}`);
        return { status: response.status, body: JSON.parse(text) as Body };
      } catch (error) {
        if (attempt > 400) throw error;
        this.retries += 1;
        await pause(250);
      }
    }
  }

  private encrypted(fields: unknown) {
    return { payload: encryptForMerchant(fields, this.merchant.encryptionKey) };
  }

  async status(id: string): Promise<Body> {
    const answer = await this.call('GET', `/api/test/status/${encodeURIComponent(id)}`);
    if (answer.status !== 200)
      throw new Error(`status of ${id}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  private async create(
    flow: Flow,
    path: string,
    fields: Record<string, unknown>,
  ): Promise<Created & { first: Body }> {
    const orderId = String(fields.order_id);
    const answer = await this.call('POST', path, this.encrypted(fields));
    let first = answer.body;
    if (answer.status === 409) first = await this.status(orderId);
    else if (answer.status !== 200)
      throw new Error(`${flow} create: ${answer.status} ${JSON.stringify(answer.body)}`);
    const transactionId = String(first.data?.transaction_id);
    this.note(transactionId, `create ${answer.status} ${JSON.stringify(first)}`);
    return { flow, orderId, transactionId, first };
  }

  /** Creates one transaction of `flow` and does what its customer would (3DS approval, the deposit). */
  async run(flow: Flow, n: number): Promise<Created> {
    const common = {
      order_id: `fault-${flow}-${n}-${Date.now().toString(36)}`,
      webhook_url: this.webhookUrl,
    };
    switch (flow) {
      case 'card':
        return this.create(
          flow,
          '/api/v1/test/card',
          cardRequest({ ...common, card_number: '4242424242424242' }),
        );
      case 'card-3ds': {
        const created = await this.create(
          flow,
          '/api/v1/test/card',
          cardRequest({ ...common, card_number: '4111111111111111' }),
        );
        await this.approveChallenge(created.transactionId);
        return created;
      }
      case 'payout':
        return this.create(flow, '/api/v1/test/payout', payoutRequest(this.merchant.usdWallet, common));
      case 'payin': {
        const created = await this.create(
          flow,
          '/api/v1/test/crypto/payin',
          payinRequest({ ...common, ...SANDBOX_CRYPTO }),
        );
        await this.deposit(created.transactionId, String(created.first.data?.crypto_amount));
        return created;
      }
      case 'offramp': {
        const created = await this.create(
          flow,
          '/api/v1/test/crypto',
          rampRequest({
            ...common,
            transaction_type: 'OFFRAMP',
            fiat_amount: undefined,
            crypto_amount: 50,
            ...SANDBOX_CRYPTO,
          }),
        );
        await this.deposit(created.transactionId, '50');
        return created;
      }
    }
  }

  /**
   * A payin of `currency` on a watched local chain, paid in full by a test deposit: a real transfer from
   * the node's faucet, sent once (not retried: on a real chain a second request is a second transfer).
   * Answers when the deposit was sent (`Date.now()`), for the time until its webhook.
   */
  async payOnChain(network: string, currency: string, n: number): Promise<Created & { paidAt: number }> {
    const created = await this.create(
      'payin',
      '/api/v1/test/crypto/payin',
      payinRequest({
        order_id: `soak-${network}-${n}-${Date.now().toString(36)}`,
        webhook_url: this.webhookUrl,
        // Within every local asset's limits (BTC takes 20 USD or more), where each is offered.
        amount: 50,
        country: 'GB',
        crypto_currency: currency,
        crypto_network: network,
      }),
    );
    const amount = String(created.first.data?.crypto_amount);
    const response = await fetch(`${this.baseUrl()}/api/v1/test/crypto/${created.transactionId}/deposit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.merchant.testKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    this.note(created.transactionId, `deposit ${amount} on ${network}: ${response.status} ${text}`);
    if (response.status !== 200)
      throw new Error(`deposit to ${created.transactionId} on ${network}: ${response.status} ${text}`);
    return {
      flow: created.flow,
      orderId: created.orderId,
      transactionId: created.transactionId,
      paidAt: Date.now(),
    };
  }

  /** Creates a 3-D Secure card payment and leaves it waiting on its hosted page, as a customer who left. */
  async leaveWaiting(n: number): Promise<Created> {
    return this.create(
      'card-3ds',
      '/api/v1/test/card',
      cardRequest({
        order_id: `waiting-${n}-${Date.now().toString(36)}`,
        webhook_url: this.webhookUrl,
        card_number: '4111111111111111',
      }),
    );
  }

  /** Sends the crypto the transaction asks for, once: a retried request names the same tx hash. */
  private async deposit(transactionId: string, amount: string): Promise<void> {
    const txHash = `fault${transactionId.replace(/[^A-Za-z0-9]/g, '')}`;
    const answer = await this.call('POST', `/api/v1/test/crypto/${transactionId}/deposit`, {
      amount,
      tx_hash: txHash,
    });
    // The status and how the deposit was accounted, not cut off by the rest of the body.
    const { status, deposit } = answer.body as { status?: string; deposit?: unknown };
    this.note(
      transactionId,
      `deposit ${amount}: ${answer.status} ${status} ${JSON.stringify(deposit ?? answer.body)}`,
    );
    if (answer.status !== 200)
      throw new Error(`deposit to ${transactionId}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }

  /**
   * The cardholder approves on the hosted 3-D Secure page once the transaction asks for it (a first answer
   * can be PENDING when the workflow was slow to answer): GET the page, POST the form with its CSRF token,
   * until the status moves on.
   */
  private async approveChallenge(transactionId: string): Promise<void> {
    const page = `${this.baseUrl()}/api/v1/test/card/checkout/${transactionId}`;
    // Bounded by time, not tries: after a Postgres outage the workflow's retries back off for up to 30 s
    // a step, and a slow machine makes every try slower.
    const deadline = Date.now() + CHALLENGE_WAIT_MS;
    let seen = '';
    while (Date.now() < deadline) {
      try {
        const { status } = await this.status(transactionId);
        // What the cardholder saw, each time it changed: the trail a failure prints.
        if (status !== seen) this.note(transactionId, `challenge: status ${(seen = String(status))}`);
        if (status !== 'PENDING' && status !== 'REDIRECT') return;
        if (status === 'REDIRECT') {
          const shown = await fetch(page, { signal: AbortSignal.timeout(30_000) });
          const html = await shown.text();
          const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
          if (csrf) {
            const cookie = shown.headers
              .getSetCookie()
              .map((c) => c.split(';')[0])
              .join('; ');
            const posted = await fetch(page, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
              body: new URLSearchParams({ csrf, decision: 'approve' }).toString(),
              redirect: 'manual',
              signal: AbortSignal.timeout(30_000),
            });
            if (posted.status !== 303)
              this.note(transactionId, `challenge: approve answered ${posted.status}`);
          }
        }
      } catch {
        this.retries += 1;
      }
      await pause(250);
    }
    const trail = (this.trail.get(transactionId) ?? []).join('\n  ');
    throw new Error(
      `the challenge of ${transactionId} was not answered in ${CHALLENGE_WAIT_MS / 1000} s:\n  ${trail}`,
    );
  }
}
