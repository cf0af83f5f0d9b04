import { describe, expect, it } from 'vitest';
import { decimalAmount, minorAmount } from '../../src/schemas/fields';
import { JsonNumber } from '../../src/lib/json';
import { canonicalDecimal, formatUnits, parseUnits } from '../../src/lib/units';
import { formatMinor } from '../../src/lib/money';
import { satsPerVbyte } from '../../src/chain/bitcoin/spend';

describe('minor amounts (card and payout amount)', () => {
  it.each([
    [new JsonNumber('1050'), 1050n],
    ['1050', 1050n],
    [new JsonNumber('9007199254740993'), 9007199254740993n],
    [new JsonNumber('999999999999999999'), 999999999999999999n],
    // A JSON number in any exact form of a whole number: JSON Schema calls 1050.0 an integer.
    [new JsonNumber('1e3'), 1000n],
    [new JsonNumber('1050.0'), 1050n],
    [new JsonNumber('1.05E3'), 1050n],
    ['0001050', 1050n],
  ])('reads %j exactly as %s', (input, expected) => {
    expect(minorAmount().parse(input)).toBe(expected);
  });

  it.each([
    [new JsonNumber('0')],
    [new JsonNumber('-5')],
    [new JsonNumber('10.5')],
    [new JsonNumber('1e-3')],
    [new JsonNumber('1e18')],
    [new JsonNumber('1e999')],
    [new JsonNumber('1000000000000000000')],
    // A string is digits only.
    ['1050.0'],
    ['12a'],
    [true],
    [{}],
  ])('refuses %j', (input) => {
    const result = minorAmount('amount').safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe(
      "The amount field must be a positive integer in the currency's minor units.",
    );
  });

  it('says a missing amount is required', () => {
    expect(minorAmount('amount').safeParse(undefined).error?.issues[0]?.message).toBe(
      'The amount field is required.',
    );
  });
});

describe('decimal amounts (crypto and ramp amounts)', () => {
  it.each([
    [new JsonNumber('0.1'), '0.1'],
    [new JsonNumber('100.50'), '100.5'],
    ['0012.500', '12.5'],
    [new JsonNumber('1e2'), '100'],
    [new JsonNumber('1.5E-3'), '0.0015'],
    [new JsonNumber('2.50e1'), '25'],
    // Leading zeros carry nothing: 20 whole digits after them.
    ['0000012345678901234567890', '12345678901234567890'],
    [new JsonNumber('0.003333333333333334'), '0.003333333333333334'],
    [new JsonNumber('12345678901234567890.123456789012345678'), '12345678901234567890.123456789012345678'],
  ])('keeps %j exact as %s', (input, expected) => {
    expect(decimalAmount().parse(input)).toBe(expected);
  });

  it.each([[new JsonNumber('0')], ['0.000'], ['-1'], ['1e-3'], ['.5'], ['1.'], ['abc'], [null]])(
    'refuses %j',
    (input) => {
      expect(decimalAmount().safeParse(input).success).toBe(false);
    },
  );
});

describe('canonical decimals', () => {
  it.each([
    ['0012.50', '12.5'],
    ['0', '0'],
    ['10', '10'],
    ['1.000', '1'],
    ['1.5e3', undefined],
    ['+1', undefined],
    ['1'.repeat(21), undefined],
    [`1.${'1'.repeat(19)}`, undefined],
  ])('%s -> %s', (raw, expected) => {
    expect(canonicalDecimal(raw)).toBe(expected);
  });
});

describe('base units', () => {
  it.each([
    ['1.5', 8, 150000000n],
    ['0.00000001', 8, 1n],
    ['100', 6, 100000000n],
    ['1.500', 2, 150n],
    ['0', 18, 0n],
  ])('parses %s with %i decimals as %s', (text, decimals, units) => {
    expect(parseUnits(text, decimals)).toBe(units);
    expect(parseUnits(formatUnits(units, decimals), decimals)).toBe(units);
  });

  it.each([
    ['1.005', 2],
    ['1.5', 0],
    ['-1', 2],
    ['1e2', 2],
  ])('refuses %s with %i decimals', (text, decimals) => {
    expect(parseUnits(text, decimals)).toBeUndefined();
  });

  it.each([
    [150000000n, 8, '1.5'],
    [1n, 18, '0.000000000000000001'],
    [-2500n, 2, '-25'],
    [0n, 6, '0'],
  ])('formats %s with %i decimals as %s', (units, decimals, text) => {
    expect(formatUnits(units, decimals)).toBe(text);
  });
});

describe('money in minor units', () => {
  it.each([
    [1050n, 'USD', '10.50'],
    [5n, 'USD', '0.05'],
    [1050n, 'JPY', '1050'],
    [1050n, 'BHD', '1.050'],
    [-99n, 'EUR', '-0.99'],
  ])('%s %s is %s', (minor, currency, text) => {
    expect(formatMinor(minor, currency)).toBe(text);
  });
});

describe('the Stripe amount', () => {
  it('is the exact number, or nothing is sent', async () => {
    const { exactAmount } = await import('../../activities/connectors/stripe');
    const { NotProcessedError } = await import('../../activities/connectors/errors');
    expect(exactAmount(1050n)).toBe(1050);
    expect(exactAmount(BigInt(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    // One more is a number that would reach Stripe rounded: refused before anything is sent.
    expect(() => exactAmount(BigInt(Number.MAX_SAFE_INTEGER) + 1n)).toThrow(NotProcessedError);
  });
});

describe("a Bitcoin node's fee rate", () => {
  it.each([
    ['0.00001000', 1n],
    ['0.00012345', 13n],
    ['1e-7', 1n],
    ['2.5E-5', 3n],
    ['0.0002', 20n],
  ])('reads %s BTC per 1,000 vbytes as %s sat/vB, from its text', (feerate, sats) => {
    expect(satsPerVbyte(feerate)).toBe(sats);
  });

  it.each(['0', '-0.0001', 'abc', ''])('takes no rate from %j', (feerate) => {
    expect(satsPerVbyte(feerate)).toBeUndefined();
  });

  it('would have lost a small rate to its float: String(1e-7) is exponent text', () => {
    expect(String(0.0000001)).toBe('1e-7');
  });
});
