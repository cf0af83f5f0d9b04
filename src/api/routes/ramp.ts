import { named, ModeParams, type Api } from '../route';
import { z } from 'zod';
import {
  about,
  aboutWithoutExample,
  country,
  cryptoCurrency,
  cryptoNetwork,
  decimalAmount,
  fiatCurrencyOf,
  optional,
  personName,
  redirectUrl,
  text,
  SPACE,
} from '../../schemas/fields';
import { cardholderFields, closingFields } from '../../schemas/card-fields';
import { createRamp } from '../../transactions/ramp';
import { replyCreated } from '../reply';
import type { RouteDeps } from '../deps';
import { RampTransaction } from '../../schemas/answers';

/** ONRAMP gives `fiat_amount`, OFFRAMP `crypto_amount`; the one given is parsed into `amount`. */
export const RampRequest = named(
  'RampRequest',
  z
    .object({
      first_name: about(personName('first_name'), "The customer's first name.", 'Jane'),
      last_name: about(personName('last_name'), "The customer's last name.", 'Doe'),
      phone_number: cardholderFields.phone_number,
      transaction_type: about(
        z.enum(['ONRAMP', 'OFFRAMP'], { error: 'The transaction type field must be ONRAMP or OFFRAMP.' }),
        'ONRAMP buys crypto with fiat; OFFRAMP sells crypto for fiat.',
        'ONRAMP',
      ),
      fiat_currency: fiatCurrencyOf('The fiat side, an active ISO 4217 code.'),
      crypto_currency: cryptoCurrency(),
      crypto_network: cryptoNetwork(),
      // Read once the type says which: described as the decimal amounts they are.
      crypto_amount: aboutWithoutExample(
        z.unknown().optional().meta({ 'x-amount': 'decimal' }),
        'The crypto amount: required for OFFRAMP, not allowed otherwise.',
      ),
      fiat_amount: about(
        z.unknown().optional().meta({ 'x-amount': 'decimal' }),
        'The fiat amount: required for ONRAMP (and PAYIN links), not allowed for OFFRAMP.',
        100,
      ),
      wallet_address: about(
        text('wallet_address', {
          min: 8,
          max: 128,
          check: (v) => /^[A-Za-z0-9:_-]+$/.test(v),
          rule: 'a wallet address (letters, digits, : _ -)',
          pattern: `^${SPACE}*[A-Za-z0-9:_-]{8,128}${SPACE}*$`,
        }),
        "The customer's wallet: it receives the crypto of an ONRAMP.",
        'TXYZabc123456789wallet',
      ),
      ip_address: cardholderFields.ip_address,
      email: cardholderFields.email,
      country: about(country('country', 'alpha2'), "The customer's country.", 'US'),
      payment_method: optional(
        about(
          z.enum(['CARD', 'BANK', 'WALLET'], {
            error: 'The payment method field must be CARD, BANK or WALLET.',
          }),
          'How the customer pays the fiat of an ONRAMP.',
        ),
      ),
      redirect_url: redirectUrl(),
      ...closingFields,
    })
    .superRefine((value, ctx) => {
      const present = (v: unknown) => v !== undefined && v !== null && v !== '';
      const [needed, refused] =
        value.transaction_type === 'ONRAMP'
          ? ['fiat_amount', 'crypto_amount']
          : ['crypto_amount', 'fiat_amount'];
      if (!present(value[needed as 'fiat_amount'])) {
        ctx.addIssue({
          code: 'custom',
          path: [needed],
          message: `The ${needed.replace('_', ' ')} field is required when transaction type is ${value.transaction_type}.`,
        });
      }
      if (present(value[refused as 'fiat_amount'])) {
        ctx.addIssue({
          code: 'custom',
          path: [refused],
          message: `The ${refused.replace('_', ' ')} field is not allowed when transaction type is ${value.transaction_type}.`,
        });
      }
    })
    .transform((value, ctx) => {
      const field = value.transaction_type === 'ONRAMP' ? 'fiat_amount' : 'crypto_amount';
      const parsed = decimalAmount(field).safeParse(value[field]);
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          ctx.addIssue({ code: 'custom', path: [field], message: issue.message });
        return z.NEVER;
      }
      return { ...value, amount: parsed.data };
    }),
);

export async function rampRoutes(app: Api, deps: RouteDeps): Promise<void> {
  app.post(
    '/api/v1/:mode/crypto',
    {
      schema: {
        operationId: 'createRamp',
        tags: ['Crypto'],
        summary: 'Crypto ramp (ONRAMP or OFFRAMP)',
        description:
          'Answers `REDIRECT` to the crypto checkout page with the quote in `data`, locked for the ' +
          "transaction's window. ONRAMP: the customer pays the fiat, then the crypto goes to " +
          '`wallet_address` (30 minutes). OFFRAMP: the page shows a deposit address and a 60-minute ' +
          'deadline; deposits settle as in docs/settlement.md, then the fiat is paid out.',
        params: ModeParams,
        body: RampRequest,
      },
      config: {
        creates: 'ramp',
        reference: {
          body: 'encrypted',
          answer: { schema: RampTransaction, description: 'The ramp and its quote.' },
        },
      },
      onRequest: app.authenticate,
      preValidation: app.decryptBody,
    },
    async (request, reply) =>
      replyCreated(reply, await createRamp(deps.transactions, request.merchant, request.body)),
  );
}
