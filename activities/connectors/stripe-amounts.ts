import { currencyExponent } from '../../src/lib/currencies';
import { formatMinor } from '../../src/lib/money';

/**
 * Stripe's own currency rules (https://docs.stripe.com/currencies, "Zero-decimal currencies",
 * "Three-decimal currencies" and "Special cases"), which are not ISO 4217's. The service keeps amounts in
 * ISO minor units; Stripe takes them in its own: these say how many decimals Stripe's amount has, and by
 * what its amount must be divisible, for every currency where either differs from ISO.
 */
export interface StripeCurrencyRule {
  /** Decimals of Stripe's `amount` for the currency. */
  decimals: number;
  /** Stripe's amount must be a multiple of this (1: any integer). */
  multipleOf: bigint;
  /** Why, in words a merchant reads when an amount cannot be taken. */
  rule: string;
}

/** Stripe's zero-decimal currencies: the amount is in whole units. */
const ZERO_DECIMAL = [
  'BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA',
  'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF',
] as const; // prettier-ignore

/** Stripe's three-decimal currencies: three decimals, the last of which must be 0. */
const THREE_DECIMAL = ['BHD', 'JOD', 'KWD', 'OMR', 'TND'] as const;

export const STRIPE_CURRENCY_RULES: Readonly<Record<string, StripeCurrencyRule>> = {
  ...Object.fromEntries(
    ZERO_DECIMAL.map((code) => [
      code,
      { decimals: 0, multipleOf: 1n, rule: `Stripe takes ${code} in whole units` },
    ]),
  ),
  ...Object.fromEntries(
    THREE_DECIMAL.map((code) => [
      code,
      { decimals: 3, multipleOf: 10n, rule: `Stripe takes ${code} amounts whose last decimal is 0` },
    ]),
  ),
  // Two decimals in Stripe's API, for compatibility, yet whole krónur only: a multiple of 100.
  ISK: { decimals: 2, multipleOf: 100n, rule: 'Stripe takes ISK in whole units' },
};

/** Stripe's rule for a currency: its own, or ISO 4217's decimals with any integer amount. */
export function stripeRuleOf(currency: string): StripeCurrencyRule {
  const code = currency.toUpperCase();
  const own = STRIPE_CURRENCY_RULES[code];
  if (own) return own;
  const decimals = currencyExponent(code);
  if (decimals === undefined) throw new Error(`${code} is not an ISO 4217 currency`);
  return { decimals, multipleOf: 1n, rule: `Stripe takes ${code} with ${decimals} decimals` };
}

/**
 * An amount in ISO minor units as Stripe's `amount`, or why Stripe cannot take it exactly (10.50 MGA, where
 * Stripe takes whole ariary). Never rounds: a payment is charged exactly what was asked, or not at all.
 */
export function toStripeAmount(isoMinor: bigint, currency: string): { amount: bigint } | { refused: string } {
  const code = currency.toUpperCase();
  const iso = currencyExponent(code);
  if (iso === undefined) return { refused: `${code} is not a currency Stripe takes.` };
  const stripe = stripeRuleOf(code);
  let amount: bigint;
  if (stripe.decimals >= iso) {
    amount = isoMinor * 10n ** BigInt(stripe.decimals - iso);
  } else {
    const scale = 10n ** BigInt(iso - stripe.decimals);
    if (isoMinor % scale !== 0n)
      return { refused: `${stripe.rule}: ${formatMinor(isoMinor, code)} ${code} cannot be charged exactly.` };
    amount = isoMinor / scale;
  }
  if (amount % stripe.multipleOf !== 0n)
    return { refused: `${stripe.rule}: ${formatMinor(isoMinor, code)} ${code} cannot be charged exactly.` };
  return { amount };
}

/** Stripe's `amount` back in ISO minor units (what a lookup or a refund reports), exactly or not at all. */
export function fromStripeAmount(stripeAmount: bigint, currency: string): bigint | undefined {
  const code = currency.toUpperCase();
  const iso = currencyExponent(code);
  if (iso === undefined) return undefined;
  const stripe = stripeRuleOf(code);
  if (stripe.decimals <= iso) return stripeAmount * 10n ** BigInt(iso - stripe.decimals);
  const scale = 10n ** BigInt(stripe.decimals - iso);
  return stripeAmount % scale === 0n ? stripeAmount / scale : undefined;
}
