import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  country,
  email,
  fiatCurrency,
  httpUrl,
  ipAddress,
  minorAmount,
  optional,
  orderId,
  parseInput,
  phoneNumber,
  terminalId,
  text,
} from '../fields';
import {
  cardFields,
  cardholderColumns,
  checkCardExpiry,
  checkMerchantUrls,
  checkTerminal,
  requestHash,
} from '../transaction-input';
import { createTransaction } from '../../transactions/create';
import { cardSucceededBefore, summarizeCard, vaultCard } from '../../transactions/card-vault';
import type { CardPaymentInput } from '../../temporal/contracts';
import type { RouteDeps } from '../app';

export const CardRequest = z
  .object({
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
    ...cardFields(true),
    redirect_url: httpUrl('redirect_url'),
    webhook_url: optional(httpUrl('webhook_url')),
    order_id: optional(orderId()),
    terminal_id: optional(terminalId()),
  })
  .superRefine(checkCardExpiry);

export async function cardRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { config } = deps;
  app.post<{ Params: { mode: string } }>(
    '/api/v1/:mode/card',
    { onRequest: app.authenticate, preValidation: app.decryptBody },
    async (request, reply) => {
      const { merchantId, mode } = request.merchant;
      const input = parseInput(CardRequest, request.body);
      await checkMerchantUrls(config, mode, input);
      if (input.terminal_id) await checkTerminal(deps.db, merchantId, mode, 'card', input.terminal_id);
      const card = summarizeCard(input.card_number, config.MASTER_KEY);
      const whitelisted = await cardSucceededBefore(deps.db, merchantId, mode, card.fingerprint);
      const { card_number: _pan, card_cvv: _cvv, ...kept } = input;
      const result = await createTransaction(deps.createDeps, {
        merchantId,
        mode,
        kind: 'card',
        orderId: input.order_id ?? null,
        requestHash: requestHash(config.MASTER_KEY, { ...kept, card: card.fingerprint }),
        row: {
          amountMinor: input.amount,
          currency: input.currency,
          ...cardholderColumns(input, card),
          merchantRedirectUrl: input.redirect_url,
          webhookUrl: input.webhook_url ?? null,
          details: { is_card_WL: whitelisted },
        },
        workflowType: 'cardPayment',
        args: (transactionId): [CardPaymentInput] => [
          {
            transactionId,
            merchantId,
            mode,
            amountMinor: input.amount.toString(),
            currency: input.currency,
            terminalId: input.terminal_id,
            card,
            challengeTimeoutSeconds: config.CARD_CHALLENGE_TIMEOUT_SECONDS,
            hostedPageUrl: `${config.baseUrl}/api/v1/${mode}/card/checkout/${transactionId}`,
          },
        ],
        beforeStart: (tx, transactionId) =>
          vaultCard(
            tx,
            config.MASTER_KEY,
            transactionId,
            {
              pan: input.card_number,
              expiryMonth: input.card_expiry_month,
              expiryYear: input.card_expiry_year,
              cvv: input.card_cvv,
            },
            config.CARD_CHALLENGE_TIMEOUT_SECONDS + 3600,
          ),
      });
      if (result.replayed) void reply.header('idempotent-replayed', 'true');
      return result.body;
    },
  );
}
