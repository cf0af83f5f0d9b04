import { parse, stringify } from 'lossless-json';
import { encryptEnvelope } from '../ciphers/envelope';
import { verifyWebhook, type WebhookCheck } from '../webhooks/signing';
import * as endpoints from '../schemas/endpoints';
import type { Endpoint } from '../schemas/endpoints';
import type {
  CardPaymentRequest,
  CryptoPaymentLinkRequest,
  CurrenciesQuery,
  HostedPaymentRequest,
  PayinRequest,
  PaymentLinkRequest,
  PayoutRequest,
  RampRequest,
  RefundRequest,
} from './requests';

export type * from './requests';

/**
 * A small typed client for this service's merchant API (docs/api.md, docs/hosted.md), for a merchant's
 * TypeScript backend (packaged as `@payments/client`: packages/client) and for our own end-to-end tests. It
 * encrypts the bodies the API wants encrypted, sends the secret key, and reads every answer with numbers
 * kept exact: a JSON number that is a safe integer comes back as a number, any other (a decimal amount, an
 * integer past 2^53) as its exact text.
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

type Query = Record<string, string | number | boolean | undefined>;

export interface CreateOptions {
  /**
   * Sent as the `Idempotency-Key` header (docs/api.md): the same key with the same fields within a day
   * answers the first answer and starts nothing new; with other fields, a 409.
   */
  idempotencyKey?: string;
}

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

  // Transactions: each create may carry an `Idempotency-Key`, so that a retry answers the first answer.
  card(fields: CardPaymentRequest, options: CreateOptions = {}) {
    return this.call<TransactionBody>(endpoints.createCardPayment, { body: fields, ...options });
  }
  hostedCard(fields: HostedPaymentRequest, options: CreateOptions = {}) {
    return this.call<TransactionBody>(endpoints.createHostedCardPayment, { body: fields, ...options });
  }
  apm(fields: HostedPaymentRequest, options: CreateOptions = {}) {
    return this.call<TransactionBody>(endpoints.createApmPayment, { body: fields, ...options });
  }
  payout(fields: PayoutRequest, options: CreateOptions = {}) {
    return this.call<TransactionBody>(endpoints.createPayout, { body: fields, ...options });
  }
  ramp(fields: RampRequest, options: CreateOptions = {}) {
    return this.call<TransactionBody>(endpoints.createRamp, { body: fields, ...options });
  }
  payin(fields: PayinRequest, options: CreateOptions = {}) {
    return this.call<TransactionBody>(endpoints.createPayin, { body: fields, ...options });
  }

  /** A transaction by its id, else by the merchant's order id. */
  status(id: string) {
    return this.call<TransactionBody>(endpoints.getTransactionStatus, { params: { id } });
  }
  payoutStatus(id: string) {
    return this.call<TransactionBody>(endpoints.getPayoutStatus, { params: { id } });
  }

  // After the payment.
  refund(fields: RefundRequest) {
    return this.call<TransactionBody>(endpoints.refundTransaction, { body: fields });
  }
  chargeback(transactionId: string) {
    return this.call<TransactionBody>(endpoints.simulateChargeback, {
      body: { transaction_id: transactionId },
    });
  }
  transactions(query: Query = {}) {
    return this.call<Page<Record<string, unknown>>>(endpoints.listTransactions, { query });
  }
  walletTransactions(query: Query = {}) {
    return this.call<Page<Record<string, unknown>>>(endpoints.listWalletTransactions, { query });
  }
  webhookEvents(query: Query = {}) {
    return this.call<Page<Record<string, unknown>>>(endpoints.listWebhookEvents, { query });
  }
  redeliverWebhook(eventId: string) {
    return this.call<{ message: string; data: Record<string, unknown> }>(endpoints.redeliverWebhookEvent, {
      params: { event_id: eventId },
    });
  }

  // Wallets, currencies, links.
  wallets() {
    return this.call<{ message: string; data: Record<string, unknown>[] }>(endpoints.listWallets);
  }
  currencies(fields: CurrenciesQuery) {
    return this.call<{ message: string; data: Record<string, unknown>[] }>(endpoints.listPayinCurrencies, {
      body: fields,
    });
  }
  paymentTemplates() {
    return this.call<{ message: string; data: Record<string, unknown>[] }>(endpoints.listPaymentTemplates);
  }
  paymentLink(fields: PaymentLinkRequest) {
    return this.call<{ message: string; data: string }>(endpoints.createPaymentLink, { body: fields });
  }
  cryptoPaymentLink(fields: CryptoPaymentLinkRequest) {
    return this.call<{ message: string; data: string }>(endpoints.createCryptoPaymentLink, { body: fields });
  }

  /**
   * Checks a received webhook over its raw body (docs/webhooks.md): the signature, the body hash and that
   * it is recent. `headers` as your framework gives them (lower-case names). `webhookSecret`: your secret,
   * or during a key rotation's overlap both the new one and the old.
   */
  static verifyWebhook(
    rawBody: string,
    headers: Record<string, string | string[] | undefined>,
    webhookSecret: string | readonly string[],
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

  /**
   * One call of an endpoint as the service declares it (src/schemas/endpoints): its method, its path
   * with the key's mode and `params` filled in, and a body in the envelope wherever the endpoint takes
   * one (a bigint amount is written as the exact integer it is).
   */
  private call<T>(
    endpoint: Endpoint,
    given: { params?: Record<string, string>; body?: object; query?: Query } & CreateOptions = {},
  ): Promise<T> {
    const { reference } = endpoint.config;
    const path = endpoint.url.replace(/:(\w+)/g, (_match, name: string) =>
      name === 'mode'
        ? reference.testOnly
          ? 'test'
          : this.mode
        : encodeURIComponent(given.params?.[name] ?? ''),
    );
    const body =
      given.body === undefined
        ? endpoint.method === 'POST'
          ? {}
          : undefined
        : reference.body === 'plain'
          ? given.body
          : { payload: encryptEnvelope(stringify(given.body)!, this.options.encryptionKey) };
    const headers: Record<string, string> =
      given.idempotencyKey === undefined ? {} : { 'idempotency-key': given.idempotencyKey };
    return this.request<T>(endpoint.method, path, body, given.query, headers);
  }

  private async request<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    query: Query = {},
    headers: Record<string, string> = {},
  ): Promise<T> {
    const url = new URL(path, this.options.baseUrl);
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) url.searchParams.set(name, String(value));
    const response = await this.send(url, {
      method,
      headers: {
        authorization: `Bearer ${this.options.secretKey}`,
        ...headers,
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
