import fc from 'fast-check';
import { stringify } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { JsonNumber, parseJsonExact, stringifyExact } from '../../src/lib/json';

describe('stringifyExact', () => {
  it('writes what lossless-json writes for any JSON value, byte for byte', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(stringifyExact(value)).toBe(stringify(value));
      }),
      { numRuns: 500 },
    );
  });

  it('writes dates, undefined fields and holes as JSON.stringify does', () => {
    const value = { at: new Date('2026-11-23T10:00:00.000Z'), gone: undefined, list: [undefined, 1, 'a'] };
    expect(stringifyExact(value)).toBe('{"at":"2026-11-23T10:00:00.000Z","list":[null,1,"a"]}');
    expect(stringifyExact(undefined)).toBe('null');
  });

  it('writes bigints and exact numbers as their digits wherever they sit', () => {
    const big = 123456789012345678901234567890n;
    expect(stringifyExact({ data: [{ amount: big }] })).toBe(
      '{"data":[{"amount":123456789012345678901234567890}]}',
    );
    expect(stringifyExact({ a: { b: new JsonNumber('0.100000000000000000001') } })).toBe(
      '{"a":{"b":0.100000000000000000001}}',
    );
    expect(stringifyExact(7n)).toBe('7');
    const text = '{"amount":9007199254740993.5,"items":[1e400]}';
    expect(stringifyExact(parseJsonExact(text))).toBe(text);
  });
});
