import type { z } from 'zod';
import type { CardRequest, HostedCardRequest as HostedCardSchema } from '../schemas/requests';
import { createTransaction, type CreateOrigin, type Created } from './create';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { transactions } from '../db/schema/index';
import { cardEnteredUpdate, type CardSummary, type Mode } from '../contracts';
import { sendUpdate } from '../temporal/client';
import { findTransaction } from './lookup';
import type { TransactionRow } from './view';
import {
  cardPaidBefore,
  cardSucceededBefore,
  purgeVaultedCard,
  summarizeCard,
  vaultCard,
} from './card-vault';
import { cardholderColumns, checkMerchantUrls, checkTerminal, customerOf, requestHash } from './request';
import { hostedPageUrl, type MerchantScope, type TransactionDeps } from './deps';

/** A validated card payment request (docs/api.md, card payment): what the schema makes of the body. */
export type CardPaymentRequest = z.output<typeof CardRequest>;

/** A card payment from raw card data: vaulted, routed by the `cardPayment` workflow, 3DS when asked. */
export async function createCardPayment(
  deps: TransactionDeps,
  merchant: MerchantScope,
  input: CardPaymentRequest,
  /** The merchant's `Idempotency-Key`, when it sent one. */
  origin: CreateOrigin = {},
): Promise<Created> {
  const { config } = deps;
  await checkMerchantUrls(deps, merchant, input);
  await checkTerminal(deps.db, merchant, 'card', input.terminal_id);
  const card = summarizeCard(input.card_number, config.MASTER_KEY);
  const { card_number: pan, card_cvv: cvv, ...kept } = input;
  return createTransaction(deps, merchant, {
    idempotencyKey: origin.idempotencyKey,
    kind: 'card',
    orderId: input.order_id ?? null,
    requestHash: requestHash(config.MASTER_KEY, { ...kept, card: card.fingerprint }),
    row: {
      amountMinor: input.amount,
      currency: input.currency,
      ...cardholderColumns(input, card),
      country: input.country,
      merchantRedirectUrl: input.redirect_url,
      webhookUrl: input.webhook_url ?? null,
      // Read as the row is inserted, in the same statement.
      details: sql`jsonb_build_object('is_card_WL', ${cardPaidBefore(merchant, card.fingerprint)})`,
    },
    card: {
      pan,
      cvv,
      expiryMonth: input.card_expiry_month,
      expiryYear: input.card_expiry_year,
      holdSeconds: config.CARD_CHALLENGE_TIMEOUT_SECONDS + 3600,
    },
    workflow: 'cardPayment',
    input: (transactionId) => ({
      transactionId,
      ...merchant,
      amountMinor: input.amount.toString(),
      currency: input.currency,
      terminalId: input.terminal_id,
      card,
      challengeTimeoutSeconds: config.CARD_CHALLENGE_TIMEOUT_SECONDS,
      hostedPageUrl: hostedPageUrl(config, merchant.mode, 'card/checkout', transactionId),
    }),
  });
}

/** The projection columns a hosted payment (card or APM) knows when it is created. */
function hostedRow(input: HostedCardRequest) {
  return {
    amountMinor: input.amount,
    currency: input.currency,
    customer: customerOf(input),
    country: input.country,
    merchantRedirectUrl: input.redirect_url,
    webhookUrl: input.webhook_url ?? null,
  };
}

/** What a hosted payment's workflow is told of the amount and routing. */
function hostedAmount(input: HostedCardRequest) {
  return { amountMinor: input.amount.toString(), currency: input.currency, terminalId: input.terminal_id };
}

/** A validated hosted card payment request: the card request without the card (docs/hosted.md). */
export type HostedCardRequest = z.output<typeof HostedCardSchema>;

/**
 * A card payment whose card the customer types on our payment page: the workflow answers `REDIRECT` to
 * that page and waits there; the merchant never handles card data.
 */
export async function createHostedCardPayment(
  deps: TransactionDeps,
  merchant: MerchantScope,
  input: HostedCardRequest,
  /** The payment link the customer came through, when one creates it. */
  origin: CreateOrigin = {},
): Promise<Created> {
  const { config } = deps;
  await checkMerchantUrls(deps, merchant, input);
  await checkTerminal(deps.db, merchant, 'card', input.terminal_id);
  return createTransaction(deps, merchant, {
    idempotencyKey: origin.idempotencyKey,
    kind: 'card',
    orderId: input.order_id ?? null,
    requestHash: requestHash(config.MASTER_KEY, { ...input, hosted: true, link: origin.paymentLinkId }),
    row: { ...hostedRow(input), details: { is_card_WL: false }, paymentLinkId: origin.paymentLinkId ?? null },
    workflow: 'cardPayment',
    input: (transactionId) => ({
      transactionId,
      ...merchant,
      ...hostedAmount(input),
      cardEntryPageUrl: hostedPageUrl(config, merchant.mode, 'hosted/card', transactionId),
      challengeTimeoutSeconds: config.CARD_CHALLENGE_TIMEOUT_SECONDS,
      hostedPageUrl: hostedPageUrl(config, merchant.mode, 'card/checkout', transactionId),
    }),
  });
}

/** A card as the hosted payment page read it from the form. */
export interface TypedCard {
  pan: string;
  cvv: string;
  expiryMonth: string;
  expiryYear: string;
}

/**
 * The card the customer typed on the hosted payment page: vaulted (number and CVV encrypted, the CVV for
 * `holdSeconds` at most), its summary told to the workflow, which answers once the next step is projected.
 * A card already entered (another tab, a double submit) changes nothing. When the wait ended as the card
 * arrived (abandoned, or stopped by ops), the vault is emptied at once: nothing may keep the card. Answers
 * the transaction as it then stands.
 */
export async function submitHostedCard(
  deps: Pick<TransactionDeps, 'db' | 'temporal'> & { masterKey: string; holdSeconds: number },
  row: TransactionRow,
  card: TypedCard,
): Promise<TransactionRow> {
  const summary = await enterHostedCard(deps.db, deps.masterKey, row, {
    ...card,
    holdSeconds: deps.holdSeconds,
  });
  if (!summary) return (await findTransaction(deps.db, row.id)) ?? row;
  const outcome = await sendUpdate(deps.temporal, row.id, cardEnteredUpdate, { card: summary }, row.runId);
  if (outcome.kind !== 'done') await purgeVaultedCard(deps.db, row.id);
  return (await findTransaction(deps.db, row.id)) ?? row;
}

/**
 * Puts the card in the vault and on the projection (BIN, last four, fingerprint, whether it paid this
 * merchant before), in one database transaction and only once: undefined when a card was already entered.
 */
async function enterHostedCard(
  db: Db,
  masterKey: string,
  row: { id: string; merchantId: string; mode: Mode },
  card: TypedCard & { holdSeconds: number },
): Promise<CardSummary | undefined> {
  const summary = summarizeCard(card.pan, masterKey);
  const whitelisted = await cardSucceededBefore(db, row, summary.fingerprint);
  return db.transaction(async (tx) => {
    const claimed = await tx
      .update(transactions)
      .set({
        cardBin: summary.bin,
        cardLast4: summary.last4,
        cardFingerprint: summary.fingerprint,
        details: { is_card_WL: whitelisted },
      })
      .where(
        and(
          eq(transactions.id, row.id),
          eq(transactions.status, 'REDIRECT'),
          isNull(transactions.cardFingerprint),
        ),
      )
      .returning({ id: transactions.id });
    if (claimed.length === 0) return undefined;
    await vaultCard(tx, masterKey, row.id, card);
    return summary;
  });
}

/**
 * A payment by an alternative method (docs/hosted.md): the `apmPayment` workflow answers `REDIRECT` to our
 * page listing the methods, routes the one picked to a terminal whose provider takes it, and waits for the
 * customer's answer at the provider.
 */
export async function createApmPayment(
  deps: TransactionDeps,
  merchant: MerchantScope,
  input: HostedCardRequest,
  /** The merchant's `Idempotency-Key`, when it sent one. */
  origin: CreateOrigin = {},
): Promise<Created> {
  const { config } = deps;
  await checkMerchantUrls(deps, merchant, input);
  await checkTerminal(deps.db, merchant, 'apm', input.terminal_id);
  return createTransaction(deps, merchant, {
    idempotencyKey: origin.idempotencyKey,
    kind: 'apm',
    orderId: input.order_id ?? null,
    requestHash: requestHash(config.MASTER_KEY, { ...input, apm: true }),
    row: hostedRow(input),
    workflow: 'apmPayment',
    input: (transactionId) => ({
      transactionId,
      ...merchant,
      ...hostedAmount(input),
      methodPageUrl: hostedPageUrl(config, merchant.mode, 'apm', transactionId),
      providerPageUrl: hostedPageUrl(config, merchant.mode, 'apm/provider', transactionId),
      timeoutSeconds: config.CARD_CHALLENGE_TIMEOUT_SECONDS,
    }),
  });
}
