import { describe, expect, it } from 'vitest';
import { luhnValid } from '../../src/lib/cards';
import { summarizeCard } from '../../src/transactions/card-vault';

const KEY = 'a'.repeat(64);

describe('the Luhn check', () => {
  it.each([
    ['4242424242424242', true],
    ['4111111111111111', true],
    ['5555555555554444', true],
    ['4000000000000770', true],
    ['4000000000003261', true],
    ['4242424242424241', false],
    ['4222222222222222', false],
    ['0000000000000000', true],
    ['1234567812345678', false],
  ])('%s is %s', (pan, valid) => {
    expect(luhnValid(pan)).toBe(valid);
  });
});

describe('card summaries', () => {
  it('keep the BIN, the last four and a keyed fingerprint, never the number', () => {
    const summary = summarizeCard('4242424242424242', KEY);
    expect(summary).toEqual({
      bin: '424242',
      last4: '4242',
      fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(JSON.stringify(summary)).not.toContain('4242424242424242');
  });

  it.each([
    ['4242424242424242', '4242424242424242', true],
    ['4242424242424242', '4111111111111111', false],
  ])('fingerprint %s and %s: equal is %s', (a, b, equal) => {
    expect(summarizeCard(a, KEY).fingerprint === summarizeCard(b, KEY).fingerprint).toBe(equal);
  });

  it('fingerprints differently under another master key', () => {
    expect(summarizeCard('4242424242424242', KEY).fingerprint).not.toBe(
      summarizeCard('4242424242424242', 'b'.repeat(64)).fingerprint,
    );
  });
});
