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
  const match = /^(\d{1,20})(?:\.(\d{1,18}))?$/.exec(raw);
  if (!match) return undefined;
  const whole = match[1]!.replace(/^0+(?=\d)/, '');
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}
