import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Config } from '../config';
import type { Db } from '../db/client';
import { terminals } from '../db/schema/index';
import { keyedDigest } from '../ciphers/secrets';
import { luhnValid } from '../transactions/card-vault';
import { urlAllowed } from '../net/address-policy';
import { fieldError, text } from './fields';
import type { CardSummary, TransactionKind } from '../temporal/contracts';
import { stringifyExact } from '../lib/json';
import type { Mode } from '../lib/vocabulary';

/**
 * Card number, expiry and (for payments) CVV, with their format rules. `luhnExempt` lists numbers the
 * interface documents as sandbox test cards although they fail the Luhn check (the payout table).
 */
export function cardFields<WithCvv extends boolean>(
  withCvv: WithCvv,
  luhnExempt: ReadonlySet<string> = new Set(),
) {
  const fields = {
    card_number: text('card_number', { max: 23 })
      .transform((v) => v.replace(/[\s-]/g, ''))
      .refine((v) => /^\d{12,19}$/.test(v) && (luhnValid(v) || luhnExempt.has(v)), {
        message: 'The card number field must be a valid card number.',
      }),
    card_expiry_month: text('card_expiry_month', {
      max: 2,
      check: (v) => /^(0[1-9]|1[0-2])$/.test(v),
      rule: 'two digits, 01 to 12',
    }),
    card_expiry_year: text('card_expiry_year', {
      max: 4,
      check: (v) => /^\d{4}$/.test(v),
      rule: 'four digits (YYYY)',
    }),
  };
  const cvv = {
    card_cvv: text('card_cvv', { max: 4, check: (v) => /^\d{3,4}$/.test(v), rule: '3 or 4 digits' }),
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

/** In live mode, URLs the service will call or send customers to must be public (CONTRACT.md section 8). */
export async function checkMerchantUrls(
  config: Config,
  mode: Mode,
  input: { webhook_url?: string | undefined; redirect_url?: string | undefined },
): Promise<void> {
  for (const field of ['webhook_url', 'redirect_url'] as const) {
    const url = input[field];
    if (url && !(await urlAllowed(url, { mode, allowPrivate: config.ALLOW_PRIVATE_URLS }))) {
      fieldError(field, `The ${field.replace('_', ' ')} must not point to a private or loopback address.`);
    }
  }
}

export async function checkTerminal(
  db: Db,
  merchantId: string,
  mode: Mode,
  kind: TransactionKind,
  terminalId: string,
) {
  const [row] = await db
    .select({ id: terminals.id })
    .from(terminals)
    .where(
      and(
        eq(terminals.id, terminalId),
        eq(terminals.merchantId, merchantId),
        eq(terminals.mode, mode),
        eq(terminals.active, true),
        sql`${kind} = any(${terminals.kinds})`,
      ),
    );
  if (!row) fieldError('terminal_id', 'The selected terminal id is invalid.');
}

/** Keyed digest of the validated request, for telling a replay from a reuse of the order id. */
export function requestHash(masterKey: string, fields: Record<string, unknown>): string {
  const sorted = Object.fromEntries(Object.entries(fields).sort(([a], [b]) => a.localeCompare(b)));
  return keyedDigest(stringifyExact(sorted), masterKey, 'request-hash');
}

/** The `customer` object every transaction shows. */
export function customerOf(input: { first_name: string; last_name: string; email: string }) {
  return { first_name: input.first_name, last_name: input.last_name, email: input.email };
}

/** Projection columns of card-based transactions: the customer and what may be kept of the card. */
export function cardholderColumns(
  input: { first_name: string; last_name: string; email: string },
  card: CardSummary,
) {
  return {
    customer: customerOf(input),
    cardBin: card.bin,
    cardLast4: card.last4,
    cardFingerprint: card.fingerprint,
  };
}
