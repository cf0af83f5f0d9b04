/**
 * What each create call of the typed client takes (docs/api.md): the fields a request must carry are
 * required here, so a request that leaves one out does not compile. The service still checks every field
 * (format, length, expiry) and answers 422 with a `message` for each it refuses.
 *
 * Amounts: minor-unit amounts are integers (`1050` is 10.50 USD), as a number or a bigint past 2^53;
 * decimal amounts (crypto) are exact decimal text such as `'0.015'`, never a float.
 */

/** An integer amount in the currency's minor units. */
export type MinorAmount = number | bigint;
/** A positive decimal in major units, as exact text: `'10.50'`. */
export type DecimalAmount = string;

/** Where to notify, the merchant's own order id, a pinned terminal: optional on every create. */
export type Closing = {
  webhook_url?: string;
  order_id?: string;
  terminal_id?: string;
};

/** The cardholder, their billing address and what they pay. */
export type Cardholder = {
  first_name: string;
  last_name: string;
  email: string;
  address: string;
  /** ISO 3166 alpha-2 or alpha-3. */
  country: string;
  city: string;
  state: string;
  zip: string;
  ip_address: string;
  phone_number: string;
  amount: MinorAmount;
  /** ISO 4217, e.g. `USD`. */
  currency: string;
};

export type Card = {
  card_number: string;
  /** `01` to `12`. */
  card_expiry_month: string;
  /** Four digits. */
  card_expiry_year: string;
};

/** `card`: a card payment from raw card data; it may answer `REDIRECT` for 3-D Secure. */
export type CardPaymentRequest = Cardholder & Card & { card_cvv: string; redirect_url: string } & Closing;

/** `hostedCard` and `apm`: the customer gives the card, or picks the method, on our hosted page. */
export type HostedPaymentRequest = Cardholder & { redirect_url: string } & Closing;

/** `payout`: to a card, from one of the merchant's wallets. */
export type PayoutRequest = { wallet_id: string } & Cardholder & Card & Closing;

type RampCommon = {
  first_name: string;
  last_name: string;
  phone_number: string;
  fiat_currency: string;
  crypto_currency: string;
  crypto_network?: string;
  wallet_address: string;
  ip_address: string;
  email: string;
  /** ISO 3166 alpha-2. */
  country: string;
  payment_method?: 'CARD' | 'BANK' | 'WALLET';
  redirect_url: string;
} & Closing;

/** `ramp`: ONRAMP buys crypto for `fiat_amount`; OFFRAMP sells `crypto_amount`. */
export type RampRequest = RampCommon &
  (
    | { transaction_type: 'ONRAMP'; fiat_amount: DecimalAmount | MinorAmount; crypto_amount?: never }
    | { transaction_type: 'OFFRAMP'; crypto_amount: DecimalAmount; fiat_amount?: never }
  );

/** `payin`: the customer pays `amount` of `currency` in crypto to a deposit address. */
export type PayinRequest = {
  first_name: string;
  last_name: string;
  email: string;
  amount: DecimalAmount;
  currency: string;
  crypto_currency: string;
  crypto_network?: string;
  ip_address: string;
  phone_number: string;
  address: string;
  /** ISO 3166 alpha-2. */
  country: string;
  redirect_url: string;
} & Closing;
