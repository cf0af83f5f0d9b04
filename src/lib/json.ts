import { parse, stringify } from 'lossless-json';

/** A JSON number kept as its source text, so decimals and large integers never pass through a float. */
export class JsonNumber {
  constructor(readonly text: string) {}
}

/** Parses JSON text keeping every number exact. Throws on invalid JSON. */
export function parseJsonExact(text: string): unknown {
  return parse(text, null, (value) => new JsonNumber(value));
}

/** JSON.stringify that writes JsonNumber as its exact text and bigint as a number. */
export function stringifyExact(value: unknown): string {
  return (
    stringify(value, undefined, undefined, [
      { test: (v: unknown) => v instanceof JsonNumber, stringify: (v: unknown) => (v as JsonNumber).text },
      { test: (v: unknown) => typeof v === 'bigint', stringify: (v: unknown) => String(v) },
    ]) ?? 'null'
  );
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof JsonNumber)
  );
}
