/** The Luhn check digit test every real card number passes. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}
/** The card scheme a BIN (the card number's first six or more digits) belongs to, or null if unknown. */
export function cardBrand(bin: string): string | null {
  const n = (digits: number) => Number(bin.slice(0, digits));
  if (bin.startsWith('4')) return 'VISA';
  if ((n(2) >= 51 && n(2) <= 55) || (n(4) >= 2221 && n(4) <= 2720)) return 'MASTERCARD';
  if (n(2) === 34 || n(2) === 37) return 'AMEX';
  if (n(4) === 6011 || n(2) === 65 || (n(3) >= 644 && n(3) <= 649)) return 'DISCOVER';
  if (n(4) >= 3528 && n(4) <= 3589) return 'JCB';
  if ((n(3) >= 300 && n(3) <= 305) || n(2) === 36 || n(2) === 38) return 'DINERS';
  if (n(2) === 62) return 'UNIONPAY';
  return null;
}

/** The scheme as a customer reads it (`Visa`, `Mastercard`), from the BIN; `Card` when unknown. */
export function brandName(bin: string): string {
  const brand = cardBrand(bin.slice(0, 6));
  return brand ? (BRAND_NAMES[brand] ?? brand) : 'Card';
}

const BRAND_NAMES: Record<string, string> = {
  VISA: 'Visa',
  MASTERCARD: 'Mastercard',
  AMEX: 'American Express',
  DISCOVER: 'Discover',
  JCB: 'JCB',
  DINERS: 'Diners Club',
  UNIONPAY: 'UnionPay',
};
