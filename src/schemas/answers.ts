import { z } from 'zod';
import { APM_METHODS, LEDGER_STEPS, TRANSACTION_KINDS, TRANSACTION_STATUSES } from '../lib/vocabulary';

/**
 * What the API answers, as the routes declare it (`schema.response`) and the reference shows it: each
 * answer is registered under its name in the document. The builders of these bodies are named in the
 * descriptions (src/transactions/view.ts, lists.ts, webhook-events.ts); test/api/openapi.test.ts checks
 * real answers against the document made from these schemas. Exact numbers are written by the service's
 * exact-JSON serializer, never a float: here they are described, not parsed.
 */

/** An answer under its name in the reference. */
const named = <T extends z.ZodType>(id: string, schema: T): T => schema.meta({ id }) as T;

const text = (description: string, ...examples: string[]) =>
  z.string().meta({ description, ...(examples.length > 0 ? { examples } : {}) });
const time = (description: string) => z.string().meta({ description, format: 'date-time' });
const bool = (description: string) => z.boolean().meta({ description });

/** Written exactly by the serializer: integers of minor units, decimals in major units. */
const exact = (type: 'integer' | 'number', description: string, examples?: unknown[]) =>
  z.custom<unknown>(() => true).meta({ type, description, ...(examples ? { examples } : {}) });
const MINOR_UNITS =
  'Minor units of the currency, an exact JSON integer (also above 2^53: parse it without a float).';
const minor = (description = MINOR_UNITS) => exact('integer', description, [1050]);
const decimal = (description: string) =>
  exact('number', `${description} An exact decimal JSON number: parse it without a float.`);

export const TransactionStatus = named(
  'TransactionStatus',
  z.enum(TRANSACTION_STATUSES).meta({
    examples: ['SUCCESS'],
    description:
      '`PENDING`: being processed, waiting for payout verification, or confirming a lost answer with the ' +
      'processor. `REDIRECT`: the customer must complete a hosted page. `SUCCESS`, `FAILED`, `BLOCKED`: ' +
      'final, never change (refunds and chargebacks are flags in `data`).',
  }),
);

const Customer = named(
  'Customer',
  z.object({
    first_name: text('First name.', 'Jane'),
    last_name: text('Last name.', 'Doe'),
    email: text('Email.', 'jane@example.com'),
  }),
);

const Refund = named(
  'Refund',
  z.object({
    status: bool('True once refunded.').meta({ examples: [false] }),
    refund_date: time('When it was refunded (UTC); null when not.')
      .nullable()
      .meta({ examples: [null] }),
  }),
);

const Chargeback = named(
  'Chargeback',
  z.object({
    status: bool('True once charged back.').meta({ examples: [false] }),
    chargeback_date: time('When it was charged back (UTC); null when not.')
      .nullable()
      .meta({ examples: [null] }),
  }),
);

/** What every transaction's `data` carries. */
const base = {
  currency: text('ISO 4217 code.', 'USD'),
  order_id: text("The merchant's order id; null when none was given.", 'order-1001').nullable(),
  transaction_id: text('`PA` and 24 URL-safe characters.', 'PAq3LZ0x9Vb2Nc7Rt5Yw1Ks8D'),
  customer: Customer,
};

const descriptor = text("The routed terminal's billing descriptor.", 'SANDBOX*PRIMARY').nullable();

/** The crypto settlement (docs/settlement.md), once a deposit address is open. */
const settlement = {
  crypto_payment_status: z
    .enum(['FULLPAID', 'OVERPAID', 'UNDERPAID'])
    .nullable()
    .meta({ description: 'How what arrived compares with what was expected; null before anything arrived.' })
    .optional(),
  crypto_paid_amount: decimal('Crypto received so far.').optional(),
  deposit_address: text('Where the customer sends the crypto.').optional(),
  expires_at: time('The deposit deadline.').optional(),
  refund_amount: decimal('Crypto sent back to the customer, once any was.').optional(),
};

const CardData = named(
  'CardData',
  z
    .object({
      amount: minor(),
      ...base,
      refund: Refund,
      chargeback: Chargeback,
      descriptor,
      is_card_WL: bool('True when this card (by fingerprint) already paid this merchant.'),
    })
    .meta({
      title: 'Card payment',
      description: 'A card payment (`POST /api/v1/{mode}/card`, `/hosted/card`).',
    }),
);

const ApmData = named(
  'ApmData',
  z
    .object({
      amount: minor(),
      ...base,
      refund: Refund,
      chargeback: Chargeback,
      descriptor,
      is_card_WL: bool('Always false: no card is used (the interface carries it for card and APM).'),
      payment_method: z
        .enum(APM_METHODS)
        .nullable()
        .meta({ description: 'The method the customer picked; null before.' }),
    })
    .meta({
      title: 'APM payment',
      description: 'An alternative payment method payment (`POST /api/v1/{mode}/apm`).',
    }),
);

const PayoutData = named(
  'PayoutData',
  z
    .object({ amount: minor(), ...base, wallet_id: text('The wallet paid from.') })
    .meta({ title: 'Card payout', description: 'A card payout.' }),
);

const PayinData = named(
  'PayinData',
  z
    .object({
      amount: decimal('The fiat amount, major units.'),
      ...base,
      refund: Refund,
      crypto_currency: text('The crypto currency paid in.'),
      crypto_network: text('Its network.'),
      crypto_amount: decimal('The crypto expected, rounded up.'),
      ...settlement,
    })
    .meta({ title: 'Crypto payin', description: 'A crypto payin; settlement as in docs/settlement.md.' }),
);

const RampData = named(
  'RampData',
  z
    .object({
      transaction_id: base.transaction_id,
      order_id: base.order_id,
      customer: Customer,
      transaction_type: z.enum(['ONRAMP', 'OFFRAMP']),
      fiat: text('Fiat currency code.'),
      fiat_amount: decimal('The fiat amount, as quoted.'),
      crypto: text('Crypto currency code.'),
      crypto_amount: decimal('The crypto amount, as quoted.'),
      crypto_network: text('The network.'),
      wallet_address: text("The customer's wallet."),
      rate: decimal('Fiat per one crypto unit, as quoted (locked for the transaction).').optional(),
      tx_hash: text('ONRAMP: the chain transaction that sent the crypto.').optional(),
      fiat_payout_reference: text("OFFRAMP: the fiat payout's reference.").optional(),
      ...settlement,
    })
    .meta({
      title: 'Crypto ramp',
      description: 'A crypto ramp; an OFFRAMP also carries the settlement fields.',
    }),
);

/** The status body: creates, lookups and webhooks share it. */
const statusBody = <D extends z.ZodType>(data: D) => ({
  status: TransactionStatus,
  message: text('What happened, for people.', 'Transaction processed successfully.'),
  redirect_url: text('The hosted page the customer must be sent to, while the transaction waits on one.')
    .meta({ format: 'uri' })
    .optional(),
  data,
});
const transaction = <D extends z.ZodType>(id: string, data: D, description: string) =>
  named(id, z.object(statusBody(data)).meta({ description }));
const anyData = z.union([CardData, ApmData, PayoutData, RampData, PayinData]);

export const CardTransaction = transaction('CardTransaction', CardData, 'A card payment.');
export const ApmTransaction = transaction('ApmTransaction', ApmData, 'An APM payment.');
export const PayoutTransaction = transaction('PayoutTransaction', PayoutData, 'A card payout.');
export const RampTransaction = transaction('RampTransaction', RampData, 'A crypto ramp.');
export const PayinTransaction = transaction('PayinTransaction', PayinData, 'A crypto payin.');
export const CryptoTransaction = transaction(
  'CryptoTransaction',
  z.union([RampData, PayinData]),
  'A crypto ramp or payin.',
);
export const Transaction = transaction(
  'Transaction',
  anyData,
  'Any transaction; `data` depends on its kind.',
);

export const WebhookPayload = named(
  'WebhookPayload',
  z
    .object({
      ...statusBody(anyData),
      event_id: text('Stable across the retries of one event: ignore repeats.', 'evt_3kQ9ZxP0aLm2Nb4Vc6Rt'),
      event_type: z.enum(['status', 'refund', 'chargeback']).meta({
        description:
          'What the event announces: the transaction reached its final `status`, was refunded, or was charged back.',
      }),
    })
    .meta({ description: 'The status body at the time of the event, plus `event_id` and `event_type`.' }),
);

export const DepositAnswer = named(
  'DepositAnswer',
  z
    .object({
      ...statusBody(z.union([RampData, PayinData])),
      deposit: z.object({
        tx_hash: text('The chain transaction.'),
        amount: decimal('The crypto deposited.'),
        disposition: z.enum(['counted', 'refunded', 'held', 'duplicate', 'pending']).meta({
          description:
            'How it was accounted; `pending` for a real transfer on a watched chain, accounted once it has ' +
            '`confirmations_required` confirmations.',
        }),
        confirmations_required: z.int().optional(),
      }),
    })
    .meta({ description: 'The transaction after the deposit, and how the deposit was accounted.' }),
);

const PageMeta = named(
  'PageMeta',
  z.object({
    hasNextPage: bool('Whether older items follow.'),
    hasPreviousPage: bool('Whether newer items precede.'),
    nextCursor: text('Pass as `nextCursor` for the next page; only when there is one.').optional(),
    prevCursor: text('Pass as `prevCursor` for the previous page; only when there is one.').optional(),
    totalCount: z.int().meta({ description: 'Items the filters match (may lag new items by 10 s).' }),
  }),
);

const ListedTransaction = named(
  'ListedTransaction',
  z
    .object({
      first_name: text('Customer first name.'),
      last_name: text('Customer last name.'),
      email: text('Customer email.'),
      country: text(
        'Customer country as given; null for transactions created before it was kept.',
      ).nullable(),
      transaction_id: text('The transaction id.'),
      order_id: text('The order id.').nullable(),
      amount: text('Exact amount as text, in the unit the status body uses for the kind.').nullable(),
      converted_amount: text('The same as `amount`.').nullable(),
      currency: text('Currency code.'),
      converted_currency: text('The same as `currency`.'),
      status: TransactionStatus,
      transaction_type: z.enum(TRANSACTION_KINDS),
      card_type: text('The card scheme, from the BIN.').nullable(),
      card_number: text('`BIN******last4`, never more.').nullable(),
      created_at: time('Created.'),
      transaction_date: time('Last changed.'),
      refund_date: time('Refunded.').nullable(),
      chargeback_date: time('Charged back.').nullable(),
      suspicious_date: z.null().meta({ description: 'Always null.' }),
      merchant_connector: z.object({ name: text("The routed terminal's connector.").nullable() }),
      payment_link_id: text('The payment link that created it.').nullable(),
      user: z.object({ name: text("The merchant's name."), user_kyc: z.object({ name: text('The same.') }) }),
    })
    .meta({ description: 'A transaction as the lists show it (the vendor SDK’s `Transaction`).' }),
);

const WalletTransaction = named(
  'WalletTransaction',
  z.object({
    transaction_id: text('The transaction, or the operator’s reference, behind the entry.'),
    wallet_id: text('The wallet.'),
    amount: text('Signed minor units, as exact text.'),
    currency: text('The wallet’s currency.'),
    transaction_type: z.enum(LEDGER_STEPS).meta({ description: 'The ledger step.' }),
    created_at: time('Recorded.'),
    transaction_date: time('The same as `created_at`.'),
  }),
);

/** A success answer's message, as the route words it. */
const message = (example: string) => z.string().meta({ examples: [example] });

const page = <T extends z.ZodType>(id: string, item: T, example: string) =>
  named(id, z.object({ message: message(example), data: z.array(item), meta: PageMeta }));

export const TransactionPage = page(
  'TransactionPage',
  ListedTransaction,
  'Transactions retrieved successfully.',
);
export const WalletTransactionPage = page(
  'WalletTransactionPage',
  WalletTransaction,
  'Wallet transactions retrieved successfully.',
);

const WebhookEvent = named(
  'WebhookEvent',
  z.object({
    event_id: text('The event.'),
    transaction_id: text('Its transaction.'),
    event_type: z
      .enum(['status', 'refund', 'chargeback'])
      .meta({ description: 'What it announced: a final status, a refund or a chargeback.' }),
    status: text("The transaction's status the event told.").nullable(),
    created_at: time('When the event was recorded.'),
    delivered: bool('Whether an attempt was answered 2xx.'),
    attempts: z.array(
      z.object({
        attempted_at: time('When.'),
        http_status: z
          .int()
          .meta({ description: "The endpoint's HTTP status; null without one." })
          .nullable(),
        latency_ms: z.int().meta({ description: 'How long the attempt took.' }).nullable(),
        error: text('Why it failed; null when delivered.').nullable(),
      }),
    ),
  }),
);

export const WebhookEventPage = page(
  'WebhookEventPage',
  WebhookEvent,
  'Webhook events retrieved successfully.',
);

export const WebhookEventAnswer = named(
  'WebhookEventAnswer',
  z.object({ message: message('Webhook redelivery started.'), data: WebhookEvent }),
);

export const CurrencyList = named(
  'CurrencyList',
  z.object({
    message: message('Supported currencies retrieved successfully.'),
    data: z.array(
      z.object({
        code: text('Crypto currency code.', 'USDT'),
        name: text('Its name.', 'Tether USD'),
        symbol: text('The ticker markets list it under.', 'USDT'),
        networks: z.array(z.string()).meta({ examples: [['ETHEREUM', 'TRON']] }),
      }),
    ),
  }),
);

export const WalletList = named(
  'WalletList',
  z.object({
    message: message('Wallets retrieved successfully.'),
    data: z.array(
      z.object({
        wallet_id: text('The wallet.'),
        currency: text('Its currency.'),
        amount: minor(`Available balance. ${MINOR_UNITS}`),
        payment_method: z.enum(['CARD']).meta({ description: 'Wallets pay out to cards.' }),
        status: z.enum(['Active', 'Inactive']),
      }),
    ),
  }),
);

export const PayoutEstimate = named(
  'PayoutEstimate',
  z.object({
    message: message('Payout fee estimated successfully.'),
    data: z.object({
      amount_requried: minor('Amount plus fee: what the payout reserves (SDK spelling).'),
      wallet_balance: minor("The wallet's available balance."),
      total_fee: minor("The fee, from the merchant's fee schedule."),
    }),
  }),
);

export const TemplateList = named(
  'TemplateList',
  z.object({
    message: message('Payment templates retrieved successfully.'),
    data: z.array(
      z.object({
        template_id: text('The page layout.'),
        template_name: text('The name.'),
        payment_template_id: text('Create links with this id.'),
        template_screenshot: text('A screenshot URL.').nullable(),
        redirect_url: text("Where the link's customers return."),
        webhook_url: text("Where the link's payments notify.").nullable(),
      }),
    ),
  }),
);

export const PaymentLink = named(
  'PaymentLink',
  z.object({
    message: message('Payment link created successfully.'),
    data: text('The link to give the customer.').meta({ format: 'uri' }),
  }),
);

export const LinkState = named(
  'LinkState',
  z.object({
    message: message('Payment link expired.'),
    data: z.object({
      link_id: text('The link.'),
      status: z.enum(['expired', 'used']).meta({ description: 'Expired now, or used by a customer first.' }),
    }),
  }),
);

export const Health = named('Health', z.object({ status: z.enum(['ok']) }));

export const Readiness = named(
  'Readiness',
  z.object({
    status: z.enum(['ok', 'unavailable', 'draining']),
    postgres: z.enum(['ok', 'unavailable']).optional(),
    temporal: z.enum(['ok', 'unavailable']).optional(),
    /**
     * The chain nodes deposits are watched on, and whether a worker watches each now (holds its lease):
     * informative, never a reason for 503. A network without a node uses the sandbox chain.
     */
    chains: z
      .array(
        z.object({
          mode: z.enum(['test', 'live']),
          network: z.string(),
          watched: z.boolean(),
        }),
      )
      .optional(),
  }),
);

export const ErrorAnswer = named(
  'Error',
  z
    .object({
      message: text("The error; on a 422 the first failing field's first message."),
      errors: z
        .record(z.string(), z.array(z.string()))
        .meta({ description: '422 only: every failing field with its messages.' })
        .optional(),
    })
    .meta({ description: 'Every error body (docs/api.md, errors).' }),
);
