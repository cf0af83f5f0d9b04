/**
 * Exact conversions between decimal text and integer base units (minor units of a fiat currency, or the
 * smallest unit of a crypto asset). Pure and dependency-free, so workflow code can use it too.
 */

/** `"1.5"`, 8 -> 150000000n. Undefined when the text has more decimals than `decimals` or is not a decimal. */
export function parseUnits(text: string, decimals: number): bigint | undefined {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > decimals) return undefined;
  return BigInt(match[1]!) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
}

/** 150000000n, 8 -> `"1.5"`: no trailing zeros, no exponent. */
export function formatUnits(units: bigint, decimals: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** `"0012.50"` -> `"12.5"`; undefined for anything but a plain non-negative decimal of sane size. */
export function canonicalDecimal(raw: string): string | undefined {
  // Leading zeros carry nothing: the 20 whole digits are counted after them.
  const match = /^0*(\d{1,20})(?:\.(\d{1,18}))?$/.exec(raw);
  if (!match) return undefined;
  const whole = match[1]!.replace(/^0+(?=\d)/, '');
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/**
 * A JSON number's text as plain decimal text, exactly: `1e2` -> `"100"`, `1050.0` -> `"1050.0"`,
 * `1.5E-3` -> `"0.0015"`. Undefined for a negative number or an exponent beyond ±40 (no amount needs one).
 */
export function plainDecimal(text: string): string | undefined {
  const match = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return undefined;
  const exponent = Number(match[3] ?? 0);
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 40) return undefined;
  const fraction = match[2] ?? '';
  if (match[3] === undefined) return fraction ? `${match[1]}.${fraction}` : match[1];
  // All the digits, with the decimal point moved `exponent` places to the right.
  const digits = `${match[1]}${fraction}`;
  const point = match[1]!.length + exponent;
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${digits}${'0'.repeat(point - digits.length)}`;
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}
