import { parse, stringify } from 'lossless-json';
import { encryptEnvelope } from '../ciphers/envelope';
import { verifyWebhook, type WebhookCheck } from '../webhooks/signing';
import type {
  CardPaymentRequest,
  HostedPaymentRequest,
  PayinRequest,
  PayoutRequest,
  RampRequest,
} from './requests';

export type * from './requests';

/**
 * A small typed client for this service's merchant API (docs/api.md, docs/hosted.md), for a merchant's
 * TypeScript backend and for our own end-to-end tests. It encrypts the bodies the API wants encrypted,
 * sends the secret key, and reads every answer with numbers kept exact: a JSON number that is a safe
 * integer comes back as a number, any other (a decimal amount, an integer past 2^53) as its exact text.
 */

/** A transaction as creates, status lookups and webhooks show it (docs/api.md, the transaction body). */
export interface TransactionBody {
  status: 'PENDING' | 'REDIRECT' | 'SUCCESS' | 'FAILED' | 'BLOCKED';
  message: string;
  redirect_url?: string;
  data: { transaction_id: string; order_id: string | null } & Record<string, unknown>;
}

export interface Page<Row> {
  message: string;
  data: Row[];
  meta: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    nextCursor?: string;
    prevCursor?: string;
    totalCount: number;
  };
}

/** A refusal: the HTTP status, the contract's `message`, and every failing field's messages. */
export class PaymentsError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: Record<string, string[]> = {},
  ) {
    super(message);
  }
}

type Fields = Record<string, unknown>;
type Query = Record<string, string | number | boolean | undefined>;

export interface ClientOptions {
  /** Where the service answers, e.g. `https://payments.example`. */
  baseUrl: string;
  /** `PA_TEST_…` or `PA_LIVE_…`: the mode follows the key. */
  secretKey: string;
  /** The merchant's 32-character encryption key. */
  encryptionKey: string;
  fetch?: typeof fetch;
}

export class PaymentsClient {
  readonly mode: 'test' | 'live';
  private readonly send: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.mode = options.secretKey.startsWith('PA_LIVE_') ? 'live' : 'test';
    this.send = options.fetch ?? fetch;
  }

  // Transactions (encrypted bodies).
  card(fields: CardPaymentRequest) {
    return this.encrypted<TransactionBody>(`/api/v1/${this.mode}/card`, fields);
  }
  hostedCard(fields: HostedPaymentRequest) {
    return this.encrypted<TransactionBody>(`/api/v1/${this.mode}/hosted/card`, fields);
  }
  apm(fields: HostedPaymentRequest) {
    return this.encrypted<TransactionBody>(`/api/v1/${this.mode}/apm`, fields);
  }
  payout(fields: PayoutRequest) {
    return this.encrypted<TransactionBody>(`/api/v1/${this.mode}/payout`, fields);
  }
  ramp(fields: RampRequest) {
    return this.encrypted<TransactionBody>(`/api/v1/${this.mode}/crypto`, fields);
  }
  payin(fields: PayinRequest) {
    return this.encrypted<TransactionBody>(`/api/v1/${this.mode}/crypto/payin`, fields);
  }

  /** A transaction by its id, else by the merchant's order id. */
  status(id: string) {
    return this.request<TransactionBody>('GET', `/api/${this.mode}/status/${encodeURIComponent(id)}`);
  }
  payoutStatus(id: string) {
    return this.request<TransactionBody>(
      'GET',
      `/api/v1/${this.mode}/payout/${encodeURIComponent(id)}/status`,
    );
  }

  // After the payment.
  refund(fields: { transaction_id: string; reason: string }) {
    return this.encrypted<TransactionBody>(`/api/v1/${this.mode}/refund`, fields);
  }
  chargeback(transactionId: string) {
    return this.request<TransactionBody>('POST', `/api/v1/test/chargeback`, {
      transaction_id: transactionId,
    });
  }
  transactions(query: Query = {}) {
    return this.request<Page<Record<string, unknown>>>(
      'GET',
      `/api/v1/${this.mode}-transactions`,
      undefined,
      query,
    );
  }
  walletTransactions(query: Query = {}) {
    return this.request<Page<Record<string, unknown>>>(
      'GET',
      `/api/v1/${this.mode}-wallet-transactions`,
      undefined,
      query,
    );
  }
  webhookEvents(query: Query = {}) {
    return this.request<Page<Record<string, unknown>>>(
      'GET',
      `/api/v1/${this.mode}/webhooks/events`,
      undefined,
      query,
    );
  }
  redeliverWebhook(eventId: string) {
    return this.request<{ message: string; data: Record<string, unknown> }>(
      'POST',
      `/api/v1/${this.mode}/webhooks/events/${encodeURIComponent(eventId)}/redeliver`,
      {},
    );
  }

  // Wallets, currencies, links.
  wallets() {
    return this.request<{ message: string; data: Record<string, unknown>[] }>('GET', '/api/v1/wallet');
  }
  currencies(fields: { country: string; amount: number | string }) {
    return this.request<{ message: string; data: Record<string, unknown>[] }>(
      'POST',
      `/api/v1/${this.mode}/crypto/currencies`,
      fields,
    );
  }
  paymentTemplates() {
    return this.request<{ message: string; data: Record<string, unknown>[] }>(
      'GET',
      '/api/v1/payment-templates',
    );
  }
  paymentLink(fields: Fields) {
    return this.request<{ message: string; data: string }>('POST', '/api/v1/payment-link', fields);
  }
  cryptoPaymentLink(fields: Fields) {
    return this.request<{ message: string; data: string }>('POST', '/api/v1/crypto/payment-link', fields);
  }

  /**
   * Checks a received webhook over its raw body (docs/webhooks.md): the signature, the body hash and that
   * it is recent. `headers` as your framework gives them (lower-case names).
   */
  static verifyWebhook(
    rawBody: string,
    headers: Record<string, string | string[] | undefined>,
    webhookSecret: string,
    toleranceSeconds = 300,
  ): WebhookCheck & { valid: boolean } {
    const header = (name: string) => {
      const value = headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const check = verifyWebhook(
      rawBody,
      {
        id: header('webhook-id') ?? '',
        timestamp: header('webhook-timestamp') ?? '',
        signature: header('webhook-signature') ?? '',
        hash: header('fs-webhook-hash'),
      },
      webhookSecret,
      { toleranceSeconds },
    );
    return { ...check, valid: check.signature && check.hash && check.fresh };
  }

  private encrypted<T>(path: string, fields: object): Promise<T> {
    return this.request<T>('POST', path, {
      // lossless-json writes a bigint amount as the exact integer it is.
      payload: encryptEnvelope(stringify(fields)!, this.options.encryptionKey),
    });
  }

  private async request<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    query: Query = {},
  ): Promise<T> {
    const url = new URL(path, this.options.baseUrl);
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) url.searchParams.set(name, String(value));
    const response = await this.send(url, {
      method,
      headers: {
        authorization: `Bearer ${this.options.secretKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const parsed = text ? (exactJson(text) as { message?: string; errors?: Record<string, string[]> }) : {};
    if (!response.ok)
      throw new PaymentsError(response.status, parsed.message ?? `HTTP ${response.status}`, parsed.errors);
    return parsed as T;
  }
}

/** JSON parsing that keeps money exact: unsafe integers and decimals become their source text. */
function exactJson(text: string): unknown {
  return parse(text, null, (number) => {
    const value = Number(number);
    return /^-?\d+$/.test(number) && Number.isSafeInteger(value) ? value : number;
  });
}
