import { activeTerminals } from '../merchants/terminals';
import type { Config } from '../platform/config';
import type { Db } from '../db/client';
import { keyedDigest } from '../ciphers/secrets';
import { stringifyExact } from '../lib/json';
import { ApiError, fieldError } from '../platform/errors';
import { judgeUrl, type Resolver } from '../net/address-policy';
import type { CardSummary } from '../contracts';
import type { TransactionKind } from '../lib/vocabulary';
import type { MerchantScope } from './deps';

/** The customer fields every create request carries. */
export interface CustomerFields {
  first_name: string;
  last_name: string;
  email: string;
}

/** In live mode, URLs the service will call or send customers to must be public (docs/webhooks.md). */
export async function checkMerchantUrls(
  deps: { config: Pick<Config, 'ALLOW_PRIVATE_URLS'>; resolve?: Resolver | undefined },
  merchant: MerchantScope,
  input: { webhook_url?: string | undefined; redirect_url?: string | undefined },
): Promise<void> {
  const policy = { mode: merchant.mode, allowPrivate: deps.config.ALLOW_PRIVATE_URLS, resolve: deps.resolve };
  for (const field of ['webhook_url', 'redirect_url'] as const) {
    const url = input[field];
    if (!url) continue;
    const verdict = await judgeUrl(url, policy);
    const name = field.replace('_', ' ');
    if (verdict === 'private')
      fieldError(field, `The ${name} must not point to a private or loopback address.`);
    if (verdict === 'unresolvable') fieldError(field, `The ${name} host name does not resolve.`);
    if (verdict === 'dns-unavailable') throw new ApiError('UNAVAILABLE', undefined, { retryAfterSeconds: 5 });
  }
}

/** A pinned terminal must be an active terminal of the merchant, for this mode and kind. */
export async function checkTerminal(
  db: Db,
  merchant: MerchantScope,
  kind: TransactionKind,
  terminalId: string | undefined,
): Promise<void> {
  if (terminalId === undefined) return;
  const [terminal] = await activeTerminals(db, merchant, kind, terminalId);
  if (!terminal) fieldError('terminal_id', 'The selected terminal id is invalid.');
}

/** Keyed digest of the validated request, for telling a replay from a reuse of the order id. */
export function requestHash(masterKey: string, fields: Record<string, unknown>): string {
  const sorted = Object.fromEntries(Object.entries(fields).sort(([a], [b]) => a.localeCompare(b)));
  return keyedDigest(stringifyExact(sorted), masterKey, 'request-hash');
}

/** The `customer` object every transaction shows. */
export function customerOf(input: CustomerFields) {
  return { first_name: input.first_name, last_name: input.last_name, email: input.email };
}

/** Projection columns of card-based transactions: the customer and what may be kept of the card. */
export function cardholderColumns(input: CustomerFields, card: CardSummary) {
  return {
    customer: customerOf(input),
    cardBin: card.bin,
    cardLast4: card.last4,
    cardFingerprint: card.fingerprint,
  };
}
