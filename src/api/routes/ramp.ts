import { ModeParams, type Api } from '../route';
import { z } from 'zod';
import {
  country,
  decimalAmount,
  email,
  fiatCurrency,
  httpUrl,
  ipAddress,
  optional,
  personName,
  phoneNumber,
  text,
  upperCode,
  SPACE,
} from '../fields';
import { closingFields } from '../card-fields';
import { createRamp } from '../../transactions/ramp';
import { replyCreated } from '../reply';
import type { RouteDeps } from '../deps';

/** ONRAMP gives `fiat_amount`, OFFRAMP `crypto_amount`; the one given is parsed into `amount`. */
export const RampRequest = z
  .object({
    first_name: personName('first_name'),
    last_name: personName('last_name'),
    phone_number: phoneNumber(),
    transaction_type: z.enum(['ONRAMP', 'OFFRAMP'], {
      error: 'The transaction type field must be ONRAMP or OFFRAMP.',
    }),
    fiat_currency: fiatCurrency('fiat_currency'),
    crypto_currency: upperCode('crypto_currency', 10),
    crypto_network: optional(upperCode('crypto_network', 40)),
    crypto_amount: z.unknown().optional(),
    fiat_amount: z.unknown().optional(),
    wallet_address: text('wallet_address', {
      min: 8,
      max: 128,
      check: (v) => /^[A-Za-z0-9:_-]+$/.test(v),
      rule: 'a wallet address (letters, digits, : _ -)',
      pattern: `^${SPACE}*[A-Za-z0-9:_-]{8,128}${SPACE}*$`,
    }),
    ip_address: ipAddress(),
    email: email(),
    country: country('country', 'alpha2'),
    payment_method: optional(
      z.enum(['CARD', 'BANK', 'WALLET'], { error: 'The payment method field must be CARD, BANK or WALLET.' }),
    ),
    redirect_url: httpUrl('redirect_url'),
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
  });

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
          answer: { schema: 'RampTransaction', description: 'The ramp and its quote.' },
        },
      },
      onRequest: app.authenticate,
      preValidation: app.decryptBody,
    },
    async (request, reply) =>
      replyCreated(reply, await createRamp(deps.transactions, request.merchant, request.body)),
  );
}
