import { describe, expect, it } from 'vitest';
import { classify, cryptoValue, fiatValue, settledFiat, toleranceUnits } from '../../src/lib/settlement';

/** 1 BTC (8 decimals) locked at 60,000.00 USD. */
const BTC = { decimals: 8, expectedUnits: '100000000', fiatMinor: '6000000', fiatDecimals: 2 };
/** 100 USDT (6 decimals) locked at 100.00 USD. */
const USDT = { decimals: 6, expectedUnits: '100000000', fiatMinor: '10000', fiatDecimals: 2 };

describe('classification', () => {
  it.each([
    [100n, 100n, 0n, 'FULLPAID'],
    [101n, 100n, 0n, 'OVERPAID'],
    [99n, 100n, 0n, 'UNDERPAID'],
    [99n, 100n, 1n, 'FULLPAID'],
    [101n, 100n, 1n, 'FULLPAID'],
    [102n, 100n, 1n, 'OVERPAID'],
    [98n, 100n, 1n, 'UNDERPAID'],
  ] as const)('%s paid of %s with tolerance %s is %s', (paid, expected, tolerance, status) => {
    expect(classify(paid, expected, tolerance)).toBe(status);
  });
});

describe('tolerance', () => {
  it.each([
    [{ assetTolerance: null, fiatTolerance: null }, BTC, 0n],
    [{ assetTolerance: '0.5', fiatTolerance: null }, USDT, 500000n],
    [{ assetTolerance: '0.0000000199', fiatTolerance: null }, BTC, 1n],
    [{ assetTolerance: null, fiatTolerance: '1.00' }, BTC, 1666n],
    [{ assetTolerance: null, fiatTolerance: '1.009' }, BTC, 1666n],
    [{ assetTolerance: '0', fiatTolerance: '5' }, BTC, 0n],
  ])('%j on %j is %s base units', (settings, rate, units) => {
    expect(toleranceUnits(settings, rate)).toBe(units);
  });
});

describe('fiat value at the locked rate', () => {
  it.each([
    [50000000n, BTC, 3000000n],
    [1n, BTC, 0n],
    [20000000n, USDT, 2000n],
    [102345678n, USDT, 10234n],
  ])('%s units are %s minor units', (units, rate, minor) => {
    expect(fiatValue(units, rate)).toBe(minor);
  });

  it('converts fiat to crypto the same way', () => {
    expect(cryptoValue(100n, BTC)).toBe(1666n);
  });
});

describe('what a settled payment is worth', () => {
  it.each([
    ['FULLPAID', 99999000n, true, 6000000n],
    ['UNDERPAID', 50000000n, true, 3000000n],
    ['UNDERPAID', 50000000n, false, 3000000n],
    ['OVERPAID', 150000000n, true, 9000000n],
    ['OVERPAID', 150000000n, false, 6000000n],
  ] as const)('%s with %s units (excess credited: %s) is %s', (status, paid, creditExcess, minor) => {
    expect(settledFiat(status, paid, BTC, creditExcess)).toBe(minor);
  });
});
