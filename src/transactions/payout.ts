import type { z } from 'zod';
import type { PayoutRequest } from '../schemas/requests';
import { fieldError } from '../platform/errors';
import type { Db } from '../db/client';
import { walletWithPayoutFee } from '../merchants/fees';
import { createTransaction, type CreateOrigin, type Created } from './create';
import { summarizeCard } from './card-vault';
import { cardholderColumns, checkMerchantUrls, checkTerminal, requestHash } from './request';
import { hostedPageUrl, type MerchantScope, type TransactionDeps } from './deps';

/** A validated card payout request (docs/api.md, card payout). */
export type CardPayoutRequest = z.output<typeof PayoutRequest>;

/** A payout to a card from one of the merchant's wallets, carried by the `cardPayout` saga. */
export async function createCardPayout(
  deps: TransactionDeps,
  merchant: MerchantScope,
  input: CardPayoutRequest,
  /** The merchant's `Idempotency-Key`, when it sent one. */
  origin: CreateOrigin = {},
): Promise<Created> {
  const { config } = deps;
  await checkMerchantUrls(deps, merchant, input);
  const found = await walletWithPayoutFee(deps.db, merchant, input.wallet_id, input.amount);
  if (!found) fieldError('wallet_id', 'The selected wallet id is invalid.');
  const { wallet, fee } = found;
  await checkTerminal(deps.db, merchant, 'payout', input.terminal_id);
  const card = summarizeCard(input.card_number, config.MASTER_KEY);
  const { card_number: pan, ...kept } = input;
  // The number waits in the vault for as long as the cardholder may take to verify the payout.
  const holdSeconds = config.PAYOUT_VERIFICATION_TIMEOUT_SECONDS + 3600;
  return createTransaction(deps, merchant, {
    idempotencyKey: origin.idempotencyKey,
    kind: 'payout',
    orderId: input.order_id ?? null,
    requestHash: requestHash(config.MASTER_KEY, { ...kept, card: card.fingerprint }),
    row: {
      amountMinor: input.amount,
      currency: input.currency,
      ...cardholderColumns(input, card),
      country: input.country,
      webhookUrl: input.webhook_url ?? null,
      walletId: wallet.id,
    },
    card: { pan, expiryMonth: input.card_expiry_month, expiryYear: input.card_expiry_year, holdSeconds },
    workflow: 'cardPayout',
    input: (transactionId) => ({
      transactionId,
      ...merchant,
      walletId: wallet.id,
      amountMinor: input.amount.toString(),
      ...(fee > 0n ? { feeMinor: fee.toString() } : {}),
      currency: input.currency,
      terminalId: input.terminal_id,
      card,
      verificationTimeoutSeconds: config.PAYOUT_VERIFICATION_TIMEOUT_SECONDS,
      sendWindowSeconds: config.PAYOUT_SEND_WINDOW_SECONDS,
      hostedPageUrl: hostedPageUrl(config, merchant.mode, 'payout/verification', transactionId),
    }),
  });
}

/**
 * What a payout of `amount` (minor units) would take from a wallet: the amount plus the merchant's payout
 * fee, and the wallet's available balance. The wallet must be one of the merchant's of this mode.
 */
export async function estimatePayout(
  db: Db,
  merchant: MerchantScope,
  request: { wallet_id: string; amount: bigint },
): Promise<{ required: bigint; fee: bigint; balance: bigint }> {
  const found = await walletWithPayoutFee(db, merchant, request.wallet_id, request.amount);
  if (!found) fieldError('wallet_id', 'The selected wallet id is invalid.');
  const { wallet, fee } = found;
  return { required: request.amount + fee, fee, balance: wallet.available };
}
