import { z } from 'zod';
import { LEDGER_STEPS, MODES, TRANSACTION_KINDS, TRANSACTION_STATUSES } from '../lib/vocabulary';
import {
  SPACE,
  about,
  aboutWithoutExample,
  country,
  cryptoCurrency,
  cryptoNetwork,
  decimalAmount,
  fiatCurrency,
  fiatCurrencyOf,
  minorAmount,
  optional,
  orderId,
  personName,
  redirectUrl,
  terminalId,
  text,
  transactionId,
  walletId,
  webhookUrl,
} from './fields';
import { cardFields, cardholderFields, checkCardExpiry, closingFields } from './card-fields';
import { SANDBOX_PAYOUT_CARDS } from './sandbox-cards';

/**
 * What each endpoint takes: its path parameters, query or body, as the zod schemas Fastify validates with
 * (src/api/app.ts), the reference documents (their `.meta()`), the domain's services take as `z.output`
 * and the typed client sends as `z.input`. Field builders: ./fields.ts and ./card-fields.ts.
 */

/** How long a payment link may stay open. */
export const LINK_MAX_DAYS = 90;

/** Request bodies by their name in the reference, as their schemas are declared (`named`). */
export const REQUEST_BODIES = new Map<string, z.ZodType>();

/** A request body's schema, under the name the reference gives it. */
export function named<T extends z.ZodType>(name: string, schema: T): T {
  if (REQUEST_BODIES.has(name)) throw new Error(`two request bodies are named ${name}`);
  REQUEST_BODIES.set(name, schema);
  return schema;
}

/** The path's mode. Any other text is answered 404 by the authentication, before validation. */
const mode = z.string().meta({ description: "`test` or `live`: must be the key's mode.", enum: [...MODES] });

/** A transaction named by its id or its order id. */
const id = z
  .string()
  .meta({ description: 'A `transaction_id`, or the merchant’s `order_id`.', maxLength: 191 });

export const ModeParams = z.object({ mode });
export const LinkParams = z.object({
  mode,
  id: z.string().meta({ description: 'The link: the last part of its URL (`lnk_…`).', maxLength: 191 }),
});
export const TransactionParams = z.object({ mode, id });
export const EventParams = z.object({
  mode,
  event_id: z
    .string()
    .meta({ description: 'The event (`event_id` in the event log and the webhook).', maxLength: 191 }),
});

export const CardRequest = named(
  'CardRequest',
  z
    .object({
      ...cardholderFields,
      ...cardFields(true),
      redirect_url: redirectUrl(),
      ...closingFields,
    })
    .superRefine(checkCardExpiry),
);

export const HostedCardRequest = named(
  'HostedCardRequest',
  z.object({
    ...cardholderFields,
    redirect_url: redirectUrl(),
    ...closingFields,
  }),
);

/** It takes the interface's payout test cards, which fail the Luhn check: live mode refuses them. */
export const PayoutRequest = named(
  'PayoutRequest',
  z
    .object({
      wallet_id: walletId('The wallet the payout is paid from; its currency must match.'),
      ...cardholderFields,
      amount: about(minorAmount('amount'), "The transaction's amount.", 500),
      ...cardFields(false, SANDBOX_PAYOUT_CARDS),
      ...closingFields,
    })
    .superRefine(checkCardExpiry),
);

/** The card is validated as a payout's is, and used for nothing else: it is neither kept nor logged. */
export const PayoutEstimateRequest = named(
  'PayoutEstimateRequest',
  z.object({
    wallet_id: walletId(),
    amount: about(minorAmount('amount'), "The transaction's amount.", 500),
    card_number: cardFields(false, SANDBOX_PAYOUT_CARDS).card_number,
  }),
);

/** ONRAMP gives `fiat_amount`, OFFRAMP `crypto_amount`; the one given is parsed into `amount`. */
export const RampRequest = named(
  'RampRequest',
  z
    .object({
      first_name: about(personName('first_name'), "The customer's first name.", 'Jane'),
      last_name: about(personName('last_name'), "The customer's last name.", 'Doe'),
      phone_number: cardholderFields.phone_number,
      transaction_type: about(
        z.enum(['ONRAMP', 'OFFRAMP'], { error: 'The transaction type field must be ONRAMP or OFFRAMP.' }),
        'ONRAMP buys crypto with fiat; OFFRAMP sells crypto for fiat.',
        'ONRAMP',
      ),
      fiat_currency: fiatCurrencyOf('The fiat side, an active ISO 4217 code.'),
      crypto_currency: cryptoCurrency(),
      crypto_network: cryptoNetwork(),
      // Read once the type says which: described as the decimal amounts they are.
      crypto_amount: aboutWithoutExample(
        z.unknown().optional().meta({ 'x-amount': 'decimal' }),
        'The crypto amount: required for OFFRAMP, not allowed otherwise.',
      ),
      fiat_amount: about(
        z.unknown().optional().meta({ 'x-amount': 'decimal' }),
        'The fiat amount: required for ONRAMP (and PAYIN links), not allowed for OFFRAMP.',
        100,
      ),
      wallet_address: about(
        text('wallet_address', {
          min: 8,
          max: 128,
          check: (v) => /^[A-Za-z0-9:_-]+$/.test(v),
          rule: 'a wallet address (letters, digits, : _ -)',
          pattern: `^${SPACE}*[A-Za-z0-9:_-]{8,128}${SPACE}*$`,
        }),
        "The customer's wallet: it receives the crypto of an ONRAMP.",
        'TXYZabc123456789wallet',
      ),
      ip_address: cardholderFields.ip_address,
      email: cardholderFields.email,
      country: about(country('country', 'alpha2'), "The customer's country.", 'US'),
      payment_method: optional(
        about(
          z.enum(['CARD', 'BANK', 'WALLET'], {
            error: 'The payment method field must be CARD, BANK or WALLET.',
          }),
          'How the customer pays the fiat of an ONRAMP.',
        ),
      ),
      redirect_url: redirectUrl(),
      ...closingFields,
    })
    .superRefine((value, ctx) => {
      const present = (v: unknown) => v !== undefined && v !== null && v !== '';
      const [needed, refused] =
        value.transaction_type === 'ONRAMP'
          ? ['fiat_amount', 'crypto_amount']
          : ['crypto_amount', 'fiat_amount'];
      if (!present(value[needed as 'fiat_amount'])) {
        ctx.addIssue({
          code: 'custom',
          path: [needed],
          message: `The ${needed.replace('_', ' ')} field is required when transaction type is ${value.transaction_type}.`,
        });
      }
      if (present(value[refused as 'fiat_amount'])) {
        ctx.addIssue({
          code: 'custom',
          path: [refused],
          message: `The ${refused.replace('_', ' ')} field is not allowed when transaction type is ${value.transaction_type}.`,
        });
      }
    })
    .transform((value, ctx) => {
      const field = value.transaction_type === 'ONRAMP' ? 'fiat_amount' : 'crypto_amount';
      const parsed = decimalAmount(field).safeParse(value[field]);
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          ctx.addIssue({ code: 'custom', path: [field], message: issue.message });
        return z.NEVER;
      }
      return { ...value, amount: parsed.data };
    }),
);

export const PayinRequest = named(
  'PayinRequest',
  z.object({
    first_name: cardholderFields.first_name,
    last_name: cardholderFields.last_name,
    email: cardholderFields.email,
    amount: about(decimalAmount('amount'), 'The fiat amount to be paid, in `currency`.', 100),
    currency: about(
      fiatCurrency('currency'),
      'The fiat currency; the merchant needs an active wallet in it.',
      'USD',
    ),
    crypto_currency: cryptoCurrency(),
    crypto_network: cryptoNetwork(),
    ip_address: cardholderFields.ip_address,
    phone_number: cardholderFields.phone_number,
    address: cardholderFields.address,
    country: about(country('country', 'alpha2'), "The customer's country.", 'US'),
    order_id: optional(orderId()),
    redirect_url: redirectUrl(),
    webhook_url: optional(webhookUrl()),
    terminal_id: optional(terminalId()),
  }),
);

export const CurrenciesRequest = named(
  'CurrenciesRequest',
  z.object({
    country: about(country('country', 'alpha2'), "The customer's country.", 'US'),
    amount: about(decimalAmount('amount'), 'The fiat amount to be paid.', 100),
  }),
);

export const DepositRequest = named(
  'DepositRequest',
  z.object({
    amount: about(decimalAmount('amount'), 'The crypto amount deposited.', 12.5),
    tx_hash: optional(
      about(
        text('tx_hash', {
          max: 128,
          check: (v) => /^[A-Za-z0-9]+$/.test(v),
          rule: 'letters and digits only',
          pattern: `^${SPACE}*[A-Za-z0-9]+${SPACE}*$`,
        }),
        "The deposit's chain transaction hash; one is made up when left out.",
      ),
    ),
  }),
);

/** A refund is always of the whole amount: an `amount` must be that amount (checked against the transaction). */
export const RefundRequest = named(
  'RefundRequest',
  z.object({
    transaction_id: transactionId(),
    reason: about(text('reason', { max: 500 }), 'Why the transaction is refunded.', 'Customer request'),
    amount: about(
      z.unknown().optional(),
      'Leave out: a refund is always of the whole amount, and any other amount than the transaction’s is refused.',
    ),
  }),
);

export const ChargebackRequest = named('ChargebackRequest', z.object({ transaction_id: transactionId() }));

/** `expiry_date`: a day (`YYYY-MM-DD`, the link closes at its end, UTC) or an ISO 8601 time, in the future. */
const EXPIRY =
  '[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?';
const expiryDate = text('expiry_date', { max: 40, pattern: `^${SPACE}*${EXPIRY}${SPACE}*$` }).transform(
  (value, ctx) => {
    const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
    const at = new Date(day ? `${value}T23:59:59.999Z` : value);
    const valid =
      new RegExp(`^${EXPIRY}$`).test(value) &&
      !Number.isNaN(at.getTime()) &&
      (!day || at.toISOString().slice(0, 10) === value);
    if (!valid) {
      ctx.addIssue({
        code: 'custom',
        message: 'The expiry date field must be a date (YYYY-MM-DD) or an ISO 8601 time.',
      });
      return z.NEVER;
    }
    // A day closes at its end, so the 90th day from today is still within 90 days.
    const latest = Date.now() + LINK_MAX_DAYS * 86_400_000 + (day ? 86_400_000 : 0);
    if (at.getTime() <= Date.now() || at.getTime() > latest) {
      ctx.addIssue({
        code: 'custom',
        message: `The expiry date field must be in the future and within ${LINK_MAX_DAYS} days.`,
      });
      return z.NEVER;
    }
    return at;
  },
);

const paymentTemplateId = about(
  text('payment_template_id', { max: 64 }),
  'The template the link uses (`GET /api/v1/payment-templates`).',
  'ptm_8Jd2Kq0Lm5Np7Rs9Tv1W',
);
const linkExpiry = optional(
  about(expiryDate, 'When the link closes (a day closes at its end, UTC); 7 days by default.'),
);
const linkOrderId = optional(orderId('The order id the link’s payment gets; the link id otherwise.'));

export const LinkRequest = named(
  'PaymentLinkRequest',
  z
    .object({
      payment_template_id: paymentTemplateId,
      amount: optional(about(minorAmount('amount'), 'A fixed amount; without it the customer types one.')),
      currency: optional(about(fiatCurrency('currency'), 'The currency; required with `amount`.', 'USD')),
      expiry_date: linkExpiry,
      terminal_id: optional(terminalId()),
      order_id: linkOrderId,
    })
    .superRefine((input, ctx) => {
      if (input.amount !== undefined && input.currency === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['currency'],
          message: 'The currency field is required with an amount.',
        });
    }),
);

/**
 * A crypto link fixes the transaction's type, currencies and its one amount: ONRAMP and PAYIN the fiat
 * amount, OFFRAMP the crypto amount (as the create requests do).
 */
export const CryptoLinkRequest = named(
  'CryptoPaymentLinkRequest',
  z
    .object({
      payment_template_id: paymentTemplateId,
      transaction_type: about(
        z.enum(['ONRAMP', 'OFFRAMP', 'PAYIN'], {
          error: 'The transaction type field must be ONRAMP, OFFRAMP or PAYIN.',
        }),
        'What the link makes: a ramp or a crypto payin.',
        'ONRAMP',
      ),
      fiat_amount: optional(
        about(
          decimalAmount('fiat_amount'),
          'The fiat amount: required for ONRAMP (and PAYIN links), not allowed for OFFRAMP.',
          100,
        ),
      ),
      crypto_amount: optional(
        aboutWithoutExample(
          decimalAmount('crypto_amount'),
          'The crypto amount: required for OFFRAMP, not allowed otherwise.',
        ),
      ),
      fiat_currency: fiatCurrencyOf('The fiat side, an active ISO 4217 code.'),
      crypto_currency: cryptoCurrency(),
      crypto_network: cryptoNetwork(),
      expiry_date: linkExpiry,
      terminal_id: optional(terminalId()),
      order_id: linkOrderId,
    })
    .superRefine((input, ctx) => {
      const needed = input.transaction_type === 'OFFRAMP' ? 'crypto_amount' : 'fiat_amount';
      const refused = needed === 'fiat_amount' ? 'crypto_amount' : 'fiat_amount';
      if (input[needed] === undefined)
        ctx.addIssue({
          code: 'custom',
          path: [needed],
          message: `The ${needed.replace('_', ' ')} field is required when transaction type is ${input.transaction_type}.`,
        });
      if (input[refused] !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: [refused],
          message: `The ${refused.replace('_', ' ')} field is not allowed when transaction type is ${input.transaction_type}.`,
        });
    }),
);

/** A calendar day that exists: `2026-02-30` and year 0 are refused, not rolled over or sent to Postgres. */
export const isoDate = (field: string) =>
  text(field, {
    max: 64,
    check: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && v >= '0001-01-01' && dayExists(v),
    rule: 'a calendar day that exists, as YYYY-MM-DD',
    pattern: `^${SPACE}*[0-9]{4}-[0-9]{2}-[0-9]{2}${SPACE}*$`,
  }).meta({ format: 'date' });

function dayExists(day: string): boolean {
  const parsed = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === day;
}

/** At most 100 a page. */
export const pageLimit = optional(
  about(
    text('limit', {
      max: 3,
      check: (v) => /^\d+$/.test(v) && +v >= 1 && +v <= 100,
      rule: '1 to 100',
      pattern: '^0*(100|[1-9][0-9]?)$',
    }),
    'Page size, 20 unless given.',
  ),
);

/** The period a list covers, UTC days included. */
export const period = {
  transaction_start_date: optional(
    about(isoDate('transaction_start_date'), 'First day of the period (UTC), included.'),
  ),
  transaction_end_date: optional(
    about(isoDate('transaction_end_date'), 'Last day of the period (UTC), included.'),
  ),
};

export const nextCursor = optional(
  about(text('nextCursor', { max: 512 }), 'The page after the one whose `meta.nextCursor` this is.'),
);

const oneOf = <T extends string>(field: string, values: readonly T[]) =>
  text(field, {
    max: 32,
    check: (v) => (values as readonly string[]).includes(v),
    rule: `one of ${values.join(', ')}`,
  })
    .meta({ enum: [...values] })
    .transform((v) => v as T);

/** What both lists share: the period, the cursor, the page size and the order (or reference) filter. */
const paging = (orderIdMeans: string) => ({
  ...period,
  nextCursor,
  prevCursor: optional(
    about(text('prevCursor', { max: 512 }), 'The page before the one whose `meta.prevCursor` this is.'),
  ),
  order_id: optional(about(text('order_id', { max: 191 }), orderIdMeans)),
  limit: pageLimit,
});

const oneCursor = (query: { nextCursor?: string; prevCursor?: string }, ctx: z.RefinementCtx) => {
  if (query.nextCursor !== undefined && query.prevCursor !== undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['prevCursor'],
      message: 'Give nextCursor or prevCursor, not both.',
    });
};

export const ListRequest = z
  .object({
    ...paging('Only the transaction with this order id.'),
    status: optional(about(oneOf('status', TRANSACTION_STATUSES), 'Only transactions with this status.')),
    transaction_type: optional(about(oneOf('transaction_type', TRANSACTION_KINDS), 'Only this kind.')),
  })
  .superRefine(oneCursor);

/**
 * Ledger entries have a step, not a status or a kind: `transaction_type` filters by the step, `wallet_id`
 * by one of the merchant's wallets, and `status` is refused rather than ignored.
 */
export const WalletListRequest = z
  .object({
    ...paging('Only the entries of this transaction (its id).'),
    transaction_type: optional(about(oneOf('transaction_type', LEDGER_STEPS), 'Only this ledger step.')),
    wallet_id: optional(about(text('wallet_id', { max: 64 }), "Only this wallet's entries.")),
    status: z.unknown().optional().meta({
      not: {},
      description: 'Refused (422): ledger entries have no status; filter by `transaction_type`.',
    }),
  })
  .superRefine((query, ctx) => {
    oneCursor(query, ctx);
    if (query.status !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['status'],
        message: 'Wallet transactions have no status; filter them by transaction_type (the ledger step).',
      });
  });

export const EventLogRequest = z.object({
  transaction_id: optional(about(text('transaction_id', { max: 191 }), "Only this transaction's events.")),
  delivered: optional(
    text('delivered', {
      max: 5,
      check: (v) => v === 'true' || v === 'false',
      rule: 'true or false',
      pattern: `^${SPACE}*(true|false)${SPACE}*$`,
    }).meta({
      description: 'Only delivered (`true`) or only undelivered (`false`) events.',
      enum: ['true', 'false'],
    }),
  ),
  ...period,
  nextCursor,
  limit: pageLimit,
});
