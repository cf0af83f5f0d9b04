import { parse, stringify } from 'lossless-json';

/** A JSON number kept as its source text, so decimals and large integers never pass through a float. */
export class JsonNumber {
  constructor(readonly text: string) {}
}

/** Parses JSON text keeping every number exact. Throws on invalid JSON. */
export function parseJsonExact(text: string): unknown {
  return parse(text, null, (value) => new JsonNumber(value));
}

/**
 * JSON.stringify (indented by `indent` spaces when given) that writes JsonNumber as its exact text and
 * bigint as a number. A value with neither
 * goes through the native JSON.stringify, byte for byte what lossless-json writes and many times faster
 * (the lists' pages are all strings: bench/README.md).
 */
export function stringifyExact(value: unknown, indent?: number): string {
  if (!holdsExactNumber(value)) return JSON.stringify(value, undefined, indent) ?? 'null';
  return (
    stringify(value, undefined, indent, [
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

/**
 * Whether a bigint or a JsonNumber may sit anywhere in `value`. An object with its own `toJSON` (other
 * than a Date) counts as one, since what it turns into is not known before it is called.
 */
function holdsExactNumber(value: unknown): boolean {
  if (typeof value === 'bigint' || value instanceof JsonNumber) return true;
  if (typeof value !== 'object' || value === null || value instanceof Date) return false;
  if (Array.isArray(value)) return value.some(holdsExactNumber);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return true;
  return Object.values(value).some(holdsExactNumber);
}
