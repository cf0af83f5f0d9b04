import { stringify } from 'lossless-json';
import { JsonNumber } from './json';

/** JSON.stringify that writes JsonNumber as its exact text and bigint as a number. */
export function stringifyExact(value: unknown): string {
  return (
    stringify(value, undefined, undefined, [
      { test: (v: unknown) => v instanceof JsonNumber, stringify: (v: unknown) => (v as JsonNumber).text },
      { test: (v: unknown) => typeof v === 'bigint', stringify: (v: unknown) => String(v) },
    ]) ?? 'null'
  );
}
