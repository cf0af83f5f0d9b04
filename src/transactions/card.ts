import { createTransaction, type Created } from './create';
import { cardSucceededBefore, summarizeCard } from './card-vault';
import {
  cardholderColumns,
  checkMerchantUrls,
  checkTerminal,
  requestHash,
  type CardholderFields,
} from './request';
import { hostedPageUrl, type MerchantScope, type TransactionDeps } from './deps';

/** A validated card payment request (docs/api.md, card payment). */
export interface CardPaymentRequest extends CardholderFields {
  card_cvv: string;
  redirect_url: string;
}

/** A card payment from raw card data: vaulted, routed by the `cardPayment` workflow, 3DS when asked. */
export async function createCardPayment(
  deps: TransactionDeps,
  merchant: MerchantScope,
  input: CardPaymentRequest,
): Promise<Created> {
  const { config } = deps;
  await checkMerchantUrls(deps, merchant, input);
  await checkTerminal(deps.db, merchant, 'card', input.terminal_id);
  const card = summarizeCard(input.card_number, config.MASTER_KEY);
  const whitelisted = await cardSucceededBefore(deps.db, merchant, card.fingerprint);
  const { card_number: pan, card_cvv: cvv, ...kept } = input;
  return createTransaction(deps, merchant, {
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
      details: { is_card_WL: whitelisted },
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
