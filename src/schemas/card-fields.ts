import { z } from 'zod';
import { luhnValid } from '../lib/cards';
import { SANDBOX_CARD_TABLE } from './sandbox-cards';
import {
  about,
  country,
  email,
  fiatCurrency,
  ipAddress,
  minorAmount,
  optional,
  orderId,
  phoneNumber,
  terminalId,
  text,
  webhookUrl,
  SPACE,
} from './fields';

/** The sandbox's frictionless card, from its table, so the reference's example does what it says. */
const FRICTIONLESS_CARD = SANDBOX_CARD_TABLE.find(([, outcome]) => outcome.startsWith('SUCCESS'))![0];

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
    card_number: about(
      text('card_number', { max: 23, pattern: `^(${SPACE}|-)*([0-9](${SPACE}|-)*){12,19}$` })
        .transform((v) => v.replace(/[\s-]/g, ''))
        .refine((v) => /^\d{12,19}$/.test(v) && (luhnValid(v) || luhnExempt.has(v)), {
          message: 'The card number field must be a valid card number.',
        }),
      'The card number; spaces and dashes are ignored.',
      luhnExempt.size > 0 ? '4222222222222222' : FRICTIONLESS_CARD,
    ),
    card_expiry_month: about(
      text('card_expiry_month', {
        max: 2,
        check: (v) => /^(0[1-9]|1[0-2])$/.test(v),
        rule: 'two digits, 01 to 12',
        pattern: '^(0[1-9]|1[0-2])$',
      }),
      'Expiry month, MM.',
      '12',
    ),
    card_expiry_year: about(
      text('card_expiry_year', {
        max: 4,
        check: (v) => /^\d{4}$/.test(v),
        rule: 'four digits (YYYY)',
        pattern: '^[0-9]{4}$',
      }),
      'Expiry year, YYYY; the card must not have expired.',
      '2030',
    ),
  };
  const cvv = {
    card_cvv: about(
      text('card_cvv', {
        max: 4,
        check: (v) => /^\d{3,4}$/.test(v),
        rule: '3 or 4 digits',
        pattern: '^[0-9]{3,4}$',
      }),
      'The card security code.',
      '123',
    ),
  };
  return (withCvv ? { ...fields, ...cvv } : fields) as WithCvv extends true
    ? typeof fields & typeof cvv
    : typeof fields;
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
  first_name: about(text('first_name'), "The customer's first name.", 'Jane'),
  last_name: about(text('last_name'), "The customer's last name.", 'Doe'),
  email: about(email(), "The customer's email address.", 'jane@example.com'),
  address: about(text('address', { max: 255 }), 'Billing street address.', '1 Main Street'),
  country: about(country('country', 'alpha2or3'), "The customer's country.", 'US'),
  city: about(text('city'), 'Billing city.', 'New York'),
  state: about(text('state'), 'Billing state or region.', 'NY'),
  zip: about(text('zip', { max: 20 }), 'Billing ZIP or postal code.', '10001'),
  ip_address: about(ipAddress(), "The customer's IP address, IPv4 or IPv6.", '203.0.113.7'),
  phone_number: about(phoneNumber(), "The customer's phone number.", '+12025550123'),
  amount: about(minorAmount('amount'), "The transaction's amount."),
  currency: about(fiatCurrency('currency'), 'An active ISO 4217 currency code.', 'USD'),
};

/** What closes every transaction request: where to notify, the order, a pinned terminal. */
export const closingFields = {
  webhook_url: optional(webhookUrl()),
  order_id: optional(orderId()),
  terminal_id: optional(terminalId()),
};
