import { describe, expect, it } from 'vitest';
import { quote } from '../../src/lib/quotes';

describe('quotes', () => {
  it.each([
    // fiat given: crypto asked for rounds up (payins), crypto paid out rounds down (ONRAMP)
    [
      { cryptoUsd: '60000', fiatUsd: '1', fiat: '100', rounding: 'up' },
      { rate: '60000', cryptoAmount: '0.00166667', fiatAmount: '100' },
    ],
    [
      { cryptoUsd: '60000', fiatUsd: '1', fiat: '100', rounding: 'down' },
      { rate: '60000', cryptoAmount: '0.00166666', fiatAmount: '100' },
    ],
    [
      { cryptoUsd: '3000', fiatUsd: '1', fiat: '10', rounding: 'up' },
      { rate: '3000', cryptoAmount: '0.003333333333333334', fiatAmount: '10' },
    ],
    [
      { cryptoUsd: '1', fiatUsd: '1.08', fiat: '100', rounding: 'up' },
      { rate: '0.925925925925925925', cryptoAmount: '108', fiatAmount: '100' },
    ],
  ] as const)('prices %j', (given, expected) => {
    const decimals = given.cryptoUsd === '60000' ? 8 : given.cryptoUsd === '3000' ? 18 : 6;
    expect(
      quote({
        cryptoUsd: given.cryptoUsd,
        fiatUsd: given.fiatUsd,
        cryptoDecimals: decimals,
        fiatDecimals: 2,
        given: { fiat: given.fiat },
        cryptoRounding: given.rounding,
      }),
    ).toEqual(expected);
  });

  it.each([
    ['0.5', '30000'],
    ['0.00000001', '0'],
    ['0.12345678', '7407.4'],
  ])('pays %s BTC out as %s USD, rounded down to the cent', (crypto, fiat) => {
    expect(
      quote({
        cryptoUsd: '60000',
        fiatUsd: '1',
        cryptoDecimals: 8,
        fiatDecimals: 2,
        given: { crypto },
        cryptoRounding: 'down',
      }).fiatAmount,
    ).toBe(fiat);
  });
});
