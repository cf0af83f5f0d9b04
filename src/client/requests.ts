import type { z } from 'zod';
import type {
  CardRequest,
  CryptoLinkRequest,
  CurrenciesRequest,
  HostedCardRequest,
  LinkRequest,
  PayinRequest as PayinSchema,
  PayoutRequest as PayoutSchema,
  RampRequest as RampSchema,
  RefundRequest as RefundSchema,
} from '../schemas/requests';

/**
 * What each call of the typed client takes (docs/api.md): the `z.input` of the schema the service
 * validates that endpoint's body with (src/schemas/requests.ts), so a request that leaves out a required
 * field does not compile and the client cannot drift from the API. The service still checks every field
 * (format, length, expiry) and answers 422 with a `message` for each it refuses.
 *
 * Amounts: minor-unit amounts are integers (`1050` is 10.50 USD), as a number or a bigint past 2^53;
 * decimal amounts (crypto) are exact decimal text such as `'0.015'`, never a float.
 */

/** `card`: a card payment from raw card data; it may answer `REDIRECT` for 3-D Secure. */
export type CardPaymentRequest = z.input<typeof CardRequest>;

/** `hostedCard` and `apm`: the customer gives the card, or picks the method, on our hosted page. */
export type HostedPaymentRequest = z.input<typeof HostedCardRequest>;

/** `payout`: to a card, from one of the merchant's wallets. */
export type PayoutRequest = z.input<typeof PayoutSchema>;

/** `ramp`: ONRAMP buys crypto for `fiat_amount`; OFFRAMP sells `crypto_amount`. */
export type RampRequest = z.input<typeof RampSchema> &
  (
    | { transaction_type: 'ONRAMP'; fiat_amount: string | number; crypto_amount?: never }
    | { transaction_type: 'OFFRAMP'; crypto_amount: string | number; fiat_amount?: never }
  );

/** `payin`: the customer pays `amount` of `currency` in crypto to a deposit address. */
export type PayinRequest = z.input<typeof PayinSchema>;

/** `refund`: the whole amount of a settled transaction. */
export type RefundRequest = z.input<typeof RefundSchema>;

/** `currencies`: what a customer in `country` can pay `amount` with. */
export type CurrenciesQuery = z.input<typeof CurrenciesRequest>;

/** `paymentLink` and `cryptoPaymentLink`. */
export type PaymentLinkRequest = z.input<typeof LinkRequest>;
export type CryptoPaymentLinkRequest = z.input<typeof CryptoLinkRequest>;
