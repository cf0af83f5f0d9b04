import Stripe from 'stripe';
import { NotProcessedError, OutcomeUnknownError } from './errors';
import type { AuthorizeResult, CardAcquirer, TerminalAccess } from './types';
import { toStripeAmount } from './stripe-amounts';

/**
 * Stripe as a card acquirer, through Stripe's official library (docs/connectors.md). The card becomes a
 * PaymentMethod, then a PaymentIntent confirmed at once; each call carries an idempotency key derived
 * from the transaction, terminal and step, so a retried activity gets Stripe's first answer and never
 * charges twice. 3-D Secure is Stripe's own page (`next_action.redirect_to_url`), which sends the
 * cardholder back to our return URL; the answer is then read from the PaymentIntent.
 */
export interface StripeOptions {
  /** Where the API is: Stripe's by default; stripe-mock or a proxy in tests (`http://127.0.0.1:12111`). */
  apiUrl?: string;
  timeoutMs?: number;
}

/** Stripe's decline codes, told to the merchant as the sandbox tells them. */
const DECLINE_MESSAGES: Record<string, string> = {
  insufficient_funds: 'Insufficient funds.',
  expired_card: 'The card has expired.',
  incorrect_cvc: 'The card security code is incorrect.',
  lost_card: 'Card declined.',
  stolen_card: 'Card declined.',
};

/**
 * Stripe takes amounts as JSON numbers: exact only up to 2^53. Beyond that (far past any amount Stripe
 * accepts) nothing is sent, so the call is certainly not processed.
 */
export function exactAmount(minor: bigint): number {
  if (minor > BigInt(Number.MAX_SAFE_INTEGER))
    throw new NotProcessedError('stripe: the amount is beyond what a JSON number holds exactly');
  return Number(minor);
}

/**
 * The time a request to Stripe has left before the authorization's deadline, as its timeout; none left, it
 * is not sent (a PaymentMethod made before charges nothing), so it is certainly not processed.
 */
function withinDeadline(request: { deadline: Date; signal: AbortSignal }): number {
  const left = request.deadline.getTime() - Date.now();
  if (left <= 0 || request.signal.aborted)
    throw new NotProcessedError('stripe: the authorization was not sent before its deadline');
  return left;
}

const declined = (code: string | undefined | null): AuthorizeResult => ({
  outcome: 'declined',
  message: (code && DECLINE_MESSAGES[code]) || 'Card declined.',
});

export function stripeAcquirer(options: StripeOptions = {}): CardAcquirer {
  const clients = new Map<string, Stripe>();
  const api = options.apiUrl ? new URL(options.apiUrl) : undefined;

  const clientFor = (terminal: TerminalAccess): Stripe => {
    const secretKey = terminal.credentials?.secret_key;
    // No key: nothing can have been sent, so the call was certainly not processed.
    if (!secretKey) throw new NotProcessedError(`stripe: terminal ${terminal.terminalId} has no secret key`);
    let client = clients.get(secretKey);
    if (!client) {
      client = new Stripe(secretKey, {
        maxNetworkRetries: 0, // Temporal retries, with the same idempotency key
        timeout: options.timeoutMs ?? 30_000,
        ...(api
          ? {
              host: api.hostname,
              port: api.port || undefined,
              protocol: api.protocol.replace(':', '') as 'http' | 'https',
            }
          : {}),
      });
      clients.set(secretKey, client);
    }
    return client;
  };

  /**
   * Where a PaymentIntent stands, in our terms. Only a captured payment is approved: one Stripe only
   * authorized (`requires_capture`, on an account that captures by hand) is captured first (`captured`).
   */
  const resultOf = (intent: Stripe.PaymentIntent): AuthorizeResult => {
    switch (intent.status) {
      case 'succeeded':
        return { outcome: 'approved', reference: intent.id };
      case 'requires_capture':
        throw new OutcomeUnknownError('stripe: the payment is authorized, not captured');
      case 'requires_action': {
        const url = intent.next_action?.redirect_to_url?.url;
        return { outcome: 'challenge', reference: intent.id, ...(url ? { redirectUrl: url } : {}) };
      }
      case 'requires_payment_method':
      case 'canceled':
        return declined(intent.last_payment_error?.decline_code ?? intent.last_payment_error?.code);
      default:
        // processing, requires_confirmation: Stripe has not decided yet.
        throw new OutcomeUnknownError(`stripe: payment intent ${intent.status}`);
    }
  };

  /**
   * A PaymentIntent Stripe authorized but did not capture (the account captures by hand, or it was made
   * before payments asked for automatic capture) is captured, under its own idempotency key, so that what
   * the service calls a payment is one: never SUCCESS on an authorization alone, which would lapse.
   */
  const captured = async (
    stripe: Stripe,
    intent: Stripe.PaymentIntent,
    key: string,
  ): Promise<Stripe.PaymentIntent> =>
    intent.status === 'requires_capture'
      ? stripe.paymentIntents.capture(intent.id, {}, { idempotencyKey: `${key}:capture` })
      : intent;

  /** Stripe's errors in our terms: a card error is a decline; what it refused is not processed. */
  const call = async (run: () => Promise<AuthorizeResult>): Promise<AuthorizeResult> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof Stripe.errors.StripeCardError) return declined(error.decline_code ?? error.code);
      if (
        error instanceof Stripe.errors.StripeInvalidRequestError ||
        error instanceof Stripe.errors.StripeAuthenticationError ||
        error instanceof Stripe.errors.StripePermissionError ||
        error instanceof Stripe.errors.StripeRateLimitError
      ) {
        throw new NotProcessedError(`stripe: ${error.type} (${error.statusCode ?? 'no status'})`);
      }
      if (error instanceof NotProcessedError || error instanceof OutcomeUnknownError) throw error;
      // Connection errors, 5xx, idempotency conflicts: the request may have been acted on.
      throw new OutcomeUnknownError('stripe: the answer was lost');
    }
  };

  const acquirer: CardAcquirer = {
    authorize: (request) =>
      call(async () => {
        // Stripe's decimals, not ISO's: an amount it cannot take exactly is refused before any call.
        const stripeAmount = toStripeAmount(request.amountMinor, request.currency);
        if ('refused' in stripeAmount) return { outcome: 'declined', message: stripeAmount.refused };
        const stripe = clientFor(request.terminal);
        const [month, year] = request.expiry.split('/');
        const method = await stripe.paymentMethods.create(
          {
            type: 'card',
            card: { number: request.pan, exp_month: Number(month), exp_year: Number(year), cvc: request.cvv },
          },
          { idempotencyKey: `${request.idempotencyKey}:method`, timeout: withinDeadline(request) },
        );
        const intent = await stripe.paymentIntents.create(
          {
            amount: exactAmount(stripeAmount.amount),
            currency: request.currency.toLowerCase(),
            payment_method: method.id,
            confirm: true,
            // Whatever the account's default: a payment is captured, not only authorized.
            capture_method: 'automatic',
            return_url: request.returnUrl,
            metadata: { transaction_id: request.transactionId, idempotency_key: request.idempotencyKey },
          },
          // Given up at the deadline: Stripe has no expiry to set on a request, so none leaves after it, and
          // one under way is abandoned then (its answer lost: asked about, SEND_LANDS_WITHIN_MS later).
          { idempotencyKey: request.idempotencyKey, timeout: withinDeadline(request) },
        );
        return resultOf(await captured(stripe, intent, request.idempotencyKey));
      }),

    // The cardholder answered on Stripe's page; what they answered is what the PaymentIntent says now.
    completeChallenge: (request) =>
      call(async () => {
        const stripe = clientFor(request.terminal);
        const intent = await stripe.paymentIntents.retrieve(request.reference);
        // Not finished on Stripe's page yet (or the return URL was visited early): asked again later.
        if (intent.status === 'requires_action') {
          throw new NotProcessedError('stripe: the cardholder has not finished 3-D Secure');
        }
        const result = resultOf(await captured(stripe, intent, request.authorizationKey));
        return result.outcome === 'declined'
          ? { outcome: 'declined', message: '3DS authentication failed.' }
          : result;
      }),

    // An unfinished 3-D Secure: the PaymentIntent is canceled, so Stripe's page can no longer complete it.
    // One the cardholder completed first cannot be canceled; what it says then is the answer.
    cancel: (request) =>
      call(async () => {
        const stripe = clientFor(request.terminal);
        // The workflow asked first (`lookup`, which captures one only authorized): what is still open here
        // is closed, and a payment the cardholder finished meanwhile cannot be canceled.
        try {
          return resultOf(
            await stripe.paymentIntents.cancel(
              request.reference,
              {},
              { idempotencyKey: `${request.authorizationKey}:cancel` },
            ),
          );
        } catch (error) {
          if (!(error instanceof Stripe.errors.StripeInvalidRequestError)) throw error;
          return resultOf(await stripe.paymentIntents.retrieve(request.reference));
        }
      }),

    // A lost answer: the PaymentIntents created with this key's metadata (Stripe's list is consistent,
    // and the lookup runs only after the call itself has ended).
    async lookup(request) {
      const stripe = clientFor(request.terminal);
      // A known PaymentIntent is read directly; one Stripe says it does not have is asked about again,
      // never taken for "not processed".
      if (request.reference) {
        try {
          const intent = await stripe.paymentIntents.retrieve(request.reference);
          return resultOf(await captured(stripe, intent, request.authorizationKey));
        } catch (error) {
          if (error instanceof OutcomeUnknownError) return { outcome: 'pending' };
          if (error instanceof Stripe.errors.StripeError)
            throw new OutcomeUnknownError(`stripe lookup: ${error.type}`);
          throw error;
        }
      }
      try {
        for await (const intent of stripe.paymentIntents.list({
          created: { gte: Math.floor(Date.now() / 1000) - 2 * 86_400 },
          limit: 100,
        })) {
          if (intent.metadata?.idempotency_key === request.authorizationKey) {
            try {
              return resultOf(await captured(stripe, intent, request.authorizationKey));
            } catch {
              return { outcome: 'pending' };
            }
          }
        }
      } catch (error) {
        if (error instanceof Stripe.errors.StripeError)
          throw new OutcomeUnknownError(`stripe lookup: ${error.type}`);
        throw error;
      }
      return { outcome: 'not_found' };
    },

    // A full refund of the PaymentIntent, under the refund's own idempotency key.
    async refund(request) {
      const stripe = clientFor(request.terminal);
      let reference = request.reference;
      if (!reference) {
        const found = await acquirer.lookup(request);
        if (found.outcome === 'pending') throw new OutcomeUnknownError('stripe: the payment is not settled');
        if (found.outcome !== 'approved')
          return { outcome: 'refused', message: 'This transaction cannot be refunded.' };
        reference = found.reference;
      }
      try {
        const refund = await stripe.refunds.create(
          { payment_intent: reference },
          { idempotencyKey: request.refundKey },
        );
        if (refund.status === 'failed' || refund.status === 'canceled')
          return { outcome: 'refused', message: 'This transaction cannot be refunded.' };
        return { outcome: 'refunded', reference: refund.id };
      } catch (error) {
        if (error instanceof Stripe.errors.StripeInvalidRequestError)
          return { outcome: 'refused', message: 'This transaction cannot be refunded.' };
        if (error instanceof Stripe.errors.StripeError)
          throw new OutcomeUnknownError(`stripe refund: ${error.type}`);
        throw error;
      }
    },
  };
  return acquirer;
}
