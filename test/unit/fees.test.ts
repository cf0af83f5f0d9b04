import { describe, expect, it } from 'vitest';
import { feeOf } from '../../src/merchants/fees';

describe('feeOf', () => {
  it.each([
    [10_000n, '2.5', 0n, 250n],
    [500n, '1.5', 30n, 38n], // 7.5 rounds up to 8
    [1n, '0.0001', 0n, 1n], // any share of a minor unit is a whole one
    [999_999_999_999n, '100', 0n, 999_999_999_999n],
    [12_345n, '0', 0n, 0n],
    [12_345n, '0', 99n, 99n],
  ])('charges %s minor units at %s %% plus %s: %s', (amount, percent, fixed, fee) => {
    expect(feeOf(amount, { percent, fixedMinor: fixed })).toBe(fee);
  });

  it('reads the percentage as Postgres returns it, with trailing zeros', () => {
    expect(feeOf(1000n, { percent: '1.2500', fixedMinor: 0n })).toBe(13n);
  });
});
