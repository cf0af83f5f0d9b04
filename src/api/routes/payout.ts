import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { and, eq } from 'drizzle-orm';
import {
  country,
  email,
  fiatCurrency,
  fieldError,
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
import { summarizeCard, vaultCard } from '../../transactions/card-vault';
import { wallets } from '../../db/schema/index';
import type { CardPayoutInput } from '../../temporal/contracts';
import type { RouteDeps } from '../app';
import { SANDBOX_PAYOUT_CARDS } from '../../../activities/connectors/sandbox-payouts';
import type { Mode } from '../../lib/vocabulary';

/** Test mode also takes the interface's payout test cards, which do not pass the Luhn check. */
export const payoutRequest = (mode: Mode) =>
  z
    .object({
      wallet_id: text('wallet_id', { max: 64 }),
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
      ...cardFields(false, mode === 'test' ? SANDBOX_PAYOUT_CARDS : undefined),
      webhook_url: optional(httpUrl('webhook_url')),
      order_id: optional(orderId()),
      terminal_id: optional(terminalId()),
    })
    .superRefine(checkCardExpiry);

export async function payoutRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { config } = deps;
  const schemas = { test: payoutRequest('test'), live: payoutRequest('live') };
  app.post<{ Params: { mode: string } }>(
    '/api/v1/:mode/payout',
    { onRequest: app.authenticate, preValidation: app.decryptBody },
    async (request, reply) => {
      const { merchantId, mode } = request.merchant;
      const input = parseInput(schemas[mode], request.body);
      await checkMerchantUrls(config, mode, input);
      const [wallet] = await deps.db
        .select({ id: wallets.id })
        .from(wallets)
        .where(
          and(eq(wallets.id, input.wallet_id), eq(wallets.merchantId, merchantId), eq(wallets.mode, mode)),
        );
      if (!wallet) fieldError('wallet_id', 'The selected wallet id is invalid.');
      if (input.terminal_id) await checkTerminal(deps.db, merchantId, mode, 'payout', input.terminal_id);
      const card = summarizeCard(input.card_number, config.MASTER_KEY);
      const { card_number: _pan, ...kept } = input;
      const result = await createTransaction(deps.createDeps, {
        merchantId,
        mode,
        kind: 'payout',
        orderId: input.order_id ?? null,
        requestHash: requestHash(config.MASTER_KEY, { ...kept, card: card.fingerprint }),
        row: {
          amountMinor: input.amount,
          currency: input.currency,
          ...cardholderColumns(input, card),
          webhookUrl: input.webhook_url ?? null,
          walletId: input.wallet_id,
        },
        workflowType: 'cardPayout',
        args: (transactionId): [CardPayoutInput] => [
          {
            transactionId,
            merchantId,
            mode,
            walletId: input.wallet_id,
            amountMinor: input.amount.toString(),
            currency: input.currency,
            terminalId: input.terminal_id,
            card,
            verificationTimeoutSeconds: config.PAYOUT_VERIFICATION_TIMEOUT_SECONDS,
            hostedPageUrl: `${config.baseUrl}/api/v1/${mode}/payout/verification/${transactionId}`,
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
            },
            config.PAYOUT_VERIFICATION_TIMEOUT_SECONDS + 3600,
          ),
      });
      if (result.replayed) void reply.header('idempotent-replayed', 'true');
      return result.body;
    },
  );
}
