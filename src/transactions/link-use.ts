import { z } from 'zod';
import { country, email, phoneNumber, text } from '../schemas/fields';
import { PayinRequest, RampRequest } from '../schemas/requests';
import { linkUsedUpdate, workflowIds } from '../contracts';
import { sendInternalUpdate } from '../temporal/client';
import { ApiError } from '../platform/errors';
import { currencyExponent, isFiatCurrency } from '../lib/currencies';
import { networksOf } from '../coins/catalogue';
import { parseUnits } from '../lib/units';
import type { Db } from '../db/client';
import { parseInput } from '../platform/validation';
import { findLink } from './links';
import { createHostedCardPayment } from './card';
import { createPayin } from './payin';
import { createRamp } from './ramp';
import type { Created } from './create';
import type { TransactionDeps } from './deps';

/** A payment link with its template, as the link page finds it. */
export type FoundLink = NonNullable<Awaited<ReturnType<typeof findLink>>>;

/** What a customer may type on a link page. */
export type LinkField =
  | 'first_name'
  | 'last_name'
  | 'email'
  | 'phone_number'
  | 'address'
  | 'city'
  | 'state'
  | 'zip'
  | 'country'
  | 'crypto_network'
  | 'wallet_address';

/** What the link page asks of the customer for a card link: the card request's customer fields. */
const CardCustomer = z.object({
  first_name: text('first_name'),
  last_name: text('last_name'),
  email: email(),
  phone_number: phoneNumber(),
  address: text('address', { max: 255 }),
  city: text('city'),
  state: text('state'),
  zip: text('zip', { max: 20 }),
  country: country('country', 'alpha2or3'),
});

const CARD_FIELDS = Object.keys(CardCustomer.shape) as LinkField[];
const CRYPTO_COMMON: LinkField[] = ['first_name', 'last_name', 'email', 'phone_number', 'country'];

/** The fields a link asks for, and the networks its currency is offered on when the customer picks one. */
export interface LinkForm {
  fields: LinkField[];
  networks: string[];
}

/**
 * What the link's page asks the customer: a card link the card request's customer; a crypto link its
 * request's, with the network when the link leaves it to the customer and the currency has several.
 */
export async function linkForm(db: Db, { link }: FoundLink): Promise<LinkForm> {
  if (link.kind !== 'crypto' || !link.crypto) return { fields: CARD_FIELDS, networks: [] };
  const networks = link.crypto.crypto_network ? [] : await networksOf(db, link.crypto.crypto_currency);
  const network: LinkField[] = networks.length > 1 ? ['crypto_network'] : [];
  if (link.crypto.transaction_type === 'PAYIN')
    return { fields: [...CRYPTO_COMMON, 'address', ...network], networks };
  return { fields: [...CRYPTO_COMMON, ...network, 'wallet_address'], networks };
}

/** Why a link can no longer be used, if it cannot. */
export function closedReason({ link }: FoundLink, now = Date.now()): 'used' | 'expired' | undefined {
  if (link.status === 'used') return 'used';
  if (link.status === 'expired' || link.expiresAt.getTime() <= now) return 'expired';
  return undefined;
}

/** What using a link came to: its transaction, the customer's mistakes by field (`form`: not a field's), or closed. */
export type LinkUse = { created: Created } | { errors: Record<string, string> } | { closed: 'used' };

/**
 * Creates the link's transaction from what the customer typed: a hosted card payment for a card link, the
 * ramp or payin a crypto link fixes otherwise, each validated as its create request is (the customer's
 * mistakes come back by field), with the link's order id, so a link only ever makes one. The link's
 * workflow is then told it was used. `typed` holds the form's values (an open card link's `amount` and
 * `currency` among them).
 */
export async function useLink(
  deps: TransactionDeps,
  found: FoundLink,
  typed: Record<string, string>,
  ipAddress: string,
): Promise<LinkUse> {
  const form = await linkForm(deps.db, found);
  const attempt = await createFromLink(deps, found, form, typed, ipAddress);
  if ('created' in attempt) await tellLinkUsed(deps, found, attempt.created);
  return attempt;
}

async function createFromLink(
  deps: TransactionDeps,
  { link, template }: FoundLink,
  form: LinkForm,
  typed: Record<string, string>,
  ipAddress: string,
): Promise<LinkUse> {
  const merchant = { merchantId: link.merchantId, mode: link.mode };
  const closing = {
    redirect_url: template.redirectUrl,
    ...(template.webhookUrl ? { webhook_url: template.webhookUrl } : {}),
    order_id: link.orderId ?? link.id,
    ...(link.terminalId ? { terminal_id: link.terminalId } : {}),
  };
  const origin = { paymentLinkId: link.id };
  const values = Object.fromEntries(form.fields.map((name) => [name, String(typed[name] ?? '')]));
  try {
    if (link.kind === 'crypto' && link.crypto) {
      const { transaction_type: type, ...terms } = link.crypto;
      const request = { ...values, ...terms, ip_address: ipAddress, ...closing };
      if (type === 'PAYIN') {
        const { fiat_amount, fiat_currency, ...rest } = request as typeof request & { fiat_amount: string };
        const input = parseInput(PayinRequest, { ...rest, amount: fiat_amount, currency: fiat_currency });
        return { created: await createPayin(deps, merchant, input, origin) };
      }
      const input = parseInput(RampRequest, { ...request, transaction_type: type });
      return { created: await createRamp(deps, merchant, input, origin) };
    }
    const errors: Record<string, string> = {};
    const customer = CardCustomer.safeParse(values);
    if (!customer.success)
      for (const issue of customer.error.issues) errors[String(issue.path[0])] ??= issue.message;
    const amount = amountOf(link, typed, errors);
    if (!customer.success || !amount) return { errors };
    const input = { ...customer.data, ip_address: ipAddress, ...amount, ...closing };
    return { created: await createHostedCardPayment(deps, merchant, input, origin) };
  } catch (error) {
    // The link's order id already made a transaction with other details: the link was used.
    if (error instanceof ApiError && error.status === 409) return { closed: 'used' };
    if (error instanceof ApiError && error.code === 'VALIDATION') return { errors: formErrors(error, form) };
    throw error;
  }
}

/** Tells the link's workflow which transaction used it; a refusal of a first use is logged, not fatal. */
async function tellLinkUsed(deps: TransactionDeps, { link }: FoundLink, created: Created): Promise<void> {
  const transactionId = String(created.body.data.transaction_id);
  const told = await sendInternalUpdate(
    deps.temporal,
    workflowIds.paymentLink(link.id),
    linkUsedUpdate,
    { transactionId },
    link.runId,
  ).then(
    (outcome) => outcome.kind === 'done',
    () => false,
  );
  if (!told && !created.replayed)
    deps.log.warn({ linkId: link.id, transactionId }, 'link workflow refused use');
}

/** A create's refusal as the form shows it: by field where the customer typed it, else under `form`. */
function formErrors(error: ApiError, form: LinkForm): Record<string, string> {
  const shown = new Set<string>(form.fields);
  const errors: Record<string, string> = {};
  for (const [field, messages] of Object.entries(error.extra.errors ?? {}))
    errors[shown.has(field) ? field : 'form'] ??= messages[0] ?? error.message;
  if (Object.keys(errors).length === 0) errors.form = error.message;
  return errors;
}

/** The link's fixed amount, or the one the customer typed (major units, e.g. `10.50`). */
function amountOf(
  link: FoundLink['link'],
  typed: Record<string, string>,
  errors: Record<string, string>,
): { amount: bigint; currency: string } | undefined {
  if (link.amountMinor !== null && link.currency)
    return { amount: link.amountMinor, currency: link.currency };
  const currency =
    link.currency ??
    String(typed.currency ?? '')
      .trim()
      .toUpperCase();
  if (!isFiatCurrency(currency)) {
    errors.currency = 'The currency field must be a three-letter ISO 4217 code.';
    return undefined;
  }
  const exponent = currencyExponent(currency) ?? 2;
  const minor = parseUnits(String(typed.amount ?? '').trim(), exponent);
  // At most what the API takes in minor units (18 digits).
  if (minor === undefined || minor <= 0n || minor >= 10n ** 18n) {
    errors.amount = `The amount field must be a positive amount with at most ${exponent} decimals.`;
    return undefined;
  }
  return { amount: minor, currency };
}
