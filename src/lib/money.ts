import { currencyExponent } from './currencies';

/** 1050 USD -> "10.50": exact, by string arithmetic on the minor units. */
export function formatMinor(minor: bigint, currency: string): string {
  const exponent = currencyExponent(currency) ?? 2;
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = exponent > 0 ? `.${digits.slice(-exponent)}` : '';
  return `${negative ? '-' : ''}${whole}${fraction}`;
}
