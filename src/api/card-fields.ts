import { z } from 'zod';
import { luhnValid } from '../lib/cards';
import type { Mode } from '../lib/vocabulary';
import { fieldError } from '../platform/errors';
import {
  country,
  email,
  fiatCurrency,
  httpUrl,
  ipAddress,
  minorAmount,
  optional,
  orderId,
  phoneNumber,
  terminalId,
  text,
  SPACE,
} from './fields';

/**
 * Card number, expiry and (for payments) CVV, with their format rules. `luhnExempt` lists numbers the
 * interface documents as sandbox test cards although they fail the Luhn check (the payout table).
 */
export function cardFields<WithCvv extends boolean>(
  withCvv: WithCvv,
  luhnExempt: ReadonlySet<string> = new Set(),
) {
  const fields = {
    // The Luhn check digit is beyond JSON Schema: the reference says it in words.
    card_number: text('card_number', { max: 23, pattern: `^(${SPACE}|-)*([0-9](${SPACE}|-)*){12,19}$` })
      .transform((v) => v.replace(/[\s-]/g, ''))
      .refine((v) => /^\d{12,19}$/.test(v) && (luhnValid(v) || luhnExempt.has(v)), {
        message: 'The card number field must be a valid card number.',
      }),
    card_expiry_month: text('card_expiry_month', {
      max: 2,
      check: (v) => /^(0[1-9]|1[0-2])$/.test(v),
      rule: 'two digits, 01 to 12',
      pattern: '^(0[1-9]|1[0-2])$',
    }),
    card_expiry_year: text('card_expiry_year', {
      max: 4,
      check: (v) => /^\d{4}$/.test(v),
      rule: 'four digits (YYYY)',
      pattern: '^[0-9]{4}$',
    }),
  };
  const cvv = {
    card_cvv: text('card_cvv', {
      max: 4,
      check: (v) => /^\d{3,4}$/.test(v),
      rule: '3 or 4 digits',
      pattern: '^[0-9]{3,4}$',
    }),
  };
  return (withCvv ? { ...fields, ...cvv } : fields) as WithCvv extends true
    ? typeof fields & typeof cvv
    : typeof fields;
}

/**
 * The interface's payout test cards fail the Luhn check: test mode takes them, so the request schemas do;
 * live mode refuses them as any number failing it.
 */
export function refuseSandboxCardInLive(mode: Mode, cardNumber: string): void {
  if (mode === 'live' && !luhnValid(cardNumber))
    fieldError('card_number', 'The card number field must be a valid card number.');
}

/** A card that expired before this month is refused. */
export function checkCardExpiry(
  value: { card_expiry_month: string; card_expiry_year: string },
  ctx: z.RefinementCtx,
): void {
  const now = new Date();
  const year = Number(value.card_expiry_year);
  const month = Number(value.card_expiry_month);
  const current = now.getUTCFullYear() * 12 + now.getUTCMonth() + 1;
  if (year * 12 + month < current) {
    ctx.addIssue({ code: 'custom', path: ['card_expiry_year'], message: 'The card has expired.' });
  } else if (year > now.getUTCFullYear() + 50) {
    ctx.addIssue({
      code: 'custom',
      path: ['card_expiry_year'],
      message: 'The card expiry year is too far in the future.',
    });
  }
}

/** The cardholder, billing and amount fields card payments and payouts share. */
export const cardholderFields = {
  first_name: text('first_name'),
  last_name: text('last_name'),
  email: email(),
  address: text('address', { max: 255 }),
  country: country('country', 'alpha2or3'),
  city: text('city'),
  state: text('state'),
  zip: text('zip', { max: 20 }),
  ip_address: ipAddress(),
  phone_number: phoneNumber(),
  amount: minorAmount('amount'),
  currency: fiatCurrency('currency'),
};

/** What closes every transaction request: where to notify, the order, a pinned terminal. */
export const closingFields = {
  webhook_url: optional(httpUrl('webhook_url')),
  order_id: optional(orderId()),
  terminal_id: optional(terminalId()),
};
