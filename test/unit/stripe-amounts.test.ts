import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import currencyCodes from 'currency-codes';
import {
  STRIPE_CURRENCY_RULES,
  fromStripeAmount,
  stripeRuleOf,
  toStripeAmount,
} from '../../activities/connectors/stripe-amounts';

/**
 * Stripe's currency rules as it publishes them (https://docs.stripe.com/currencies): the zero-decimal list,
 * the three-decimal list (last digit 0) and the special cases, against ISO 4217's exponents.
 */
const PUBLISHED_ZERO_DECIMAL = [
  'BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA',
  'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF',
]; // prettier-ignore
const PUBLISHED_THREE_DECIMAL = ['BHD', 'JOD', 'KWD', 'OMR', 'TND'];

describe("Stripe's currency table", () => {
  it('holds the published zero-decimal and three-decimal currencies, and ISK as a special case', () => {
    for (const code of PUBLISHED_ZERO_DECIMAL)
      expect(stripeRuleOf(code), code).toMatchObject({ decimals: 0 });
    for (const code of PUBLISHED_THREE_DECIMAL)
      expect(stripeRuleOf(code), code).toMatchObject({ decimals: 3, multipleOf: 10n });
    expect(stripeRuleOf('ISK')).toMatchObject({ decimals: 2, multipleOf: 100n });
    expect(Object.keys(STRIPE_CURRENCY_RULES).sort()).toEqual(
      [...PUBLISHED_ZERO_DECIMAL, ...PUBLISHED_THREE_DECIMAL, 'ISK'].sort(),
    );
    // Everything else is as ISO 4217 has it.
    expect(stripeRuleOf('USD')).toMatchObject({ decimals: 2, multipleOf: 1n });
    expect(stripeRuleOf('eur')).toMatchObject({ decimals: 2, multipleOf: 1n });
  });

  it.each([
    ['USD', 1050n, 1050n],
    ['JPY', 500n, 500n],
    ['KRW', 15000n, 15000n],
    ['ISK', 5n, 500n],
    ['KWD', 5120n, 5120n],
    ['MGA', 1000n, 10n],
    ['UGX', 7000n, 7000n],
  ])('converts %s %s ISO minor units to Stripe amount %s, and back', (currency, iso, stripe) => {
    expect(toStripeAmount(iso, currency)).toEqual({ amount: stripe });
    expect(fromStripeAmount(stripe, currency)).toBe(iso);
  });

  it.each([
    ['MGA', 1050n, 'Stripe takes MGA in whole units: 10.50 MGA cannot be charged exactly.'],
    ['KWD', 5124n, 'Stripe takes KWD amounts whose last decimal is 0: 5.124 KWD cannot be charged exactly.'],
    ['XYZ', 100n, 'XYZ is not a currency Stripe takes.'],
  ])('refuses %s %s, which Stripe cannot take exactly, with why', (currency, iso, refused) => {
    expect(toStripeAmount(iso, currency)).toEqual({ refused });
  });

  it('never rounds: for every ISO currency, what it takes converts back to the same amount', () => {
    const codes = currencyCodes.codes().filter((code) => currencyCodes.code(code)?.digits !== undefined);
    fc.assert(
      fc.property(fc.constantFrom(...codes), fc.bigInt({ min: 1n, max: 10n ** 12n }), (code, minor) => {
        const converted = toStripeAmount(minor, code);
        if ('refused' in converted) return;
        expect(fromStripeAmount(converted.amount, code)).toBe(minor);
        expect(converted.amount % stripeRuleOf(code).multipleOf).toBe(0n);
      }),
      { numRuns: 2000 },
    );
  });
});
