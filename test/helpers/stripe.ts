import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { freePort } from '../../src/dev/postgres';
import { waitForPort } from '../../src/dev/temporal';

type Json = Record<string, unknown>;

export interface StripeDouble {
  /** What the connector is pointed at (STRIPE_API_URL). */
  url: string;
  /** Requests stripe-mock refused as not matching Stripe's API specification: must stay empty. */
  violations: string[];
  /** Every request, in order, with its idempotency key. */
  requests: { method: string; path: string; idempotencyKey: string | undefined }[];
  intents: Map<string, Json>;
  /** The refunds made, by id: a test may change one as Stripe's books would. */
  refunds: Map<string, Json>;
  /** The cardholder finishes (or fails) 3-D Secure on Stripe's page. */
  complete3ds(intentId: string, approve: boolean): void;
  /** The next PaymentIntent create is processed, then its answer lost (the connection drops). */
  loseNextIntentAnswer(): void;
  /** The next PaymentIntent create is processed, and its answer sent only `ms` later (a slow Stripe). */
  delayNextIntentAnswer(ms: number): void;
  /**
   * The account's default capture method (`automatic` unless set): with `manual`, a PaymentIntent created
   * without its own `capture_method` is only authorized (`requires_capture`) until it is captured.
   */
  captureMethod: 'automatic' | 'manual';
  close(): Promise<void>;
}

/**
 * Stripe for tests: every request goes to stripe-mock (Stripe's official mock, built from the Go module
 * proxy), which checks it against Stripe's published API specification; the answer then follows the
 * test card, as Stripe's test mode does (stripe-mock itself is stateless and answers fixtures). Repeated
 * idempotency keys get the first answer, as with Stripe.
 *   4242424242424242 succeeds; 4000000000000002 is declined; 4000000000009995 has insufficient funds;
 *   4000002760003184 needs 3-D Secure on Stripe's page; 4000000000000119 meets a Stripe server error.
 * A PaymentIntent waiting for 3-D Secure can be canceled; a succeeded one cannot.
 */
export async function startStripeDouble(): Promise<StripeDouble> {
  const binary = process.env.STRIPE_MOCK_PATH;
  if (!binary) throw new Error('STRIPE_MOCK_PATH must be set: run the tests with `npm test`.');
  const mockPort = await freePort();
  // Its HTTPS listener, which nothing here uses, on a port the system chooses: by default it takes 12112,
  // so a second stripe-mock (another test file's, at the same time) would exit.
  const mock: ChildProcess = spawn(
    binary,
    ['-http-addr', `127.0.0.1:${mockPort}`, '-https-addr', '127.0.0.1:'],
    {
      stdio: 'ignore',
    },
  );
  await waitForPort('127.0.0.1', mockPort, 30_000);

  const violations: string[] = [];
  const requests: StripeDouble['requests'] = [];
  const intents = new Map<string, Json>();
  const refunds = new Map<string, Json>();
  const cards = new Map<string, string>(); // payment method id -> card number
  const answered = new Map<string, { status: number; body: Json }>(); // idempotency key -> first answer
  let loseNext = false;
  let delayNext = 0;

  const read = (request: IncomingMessage) =>
    new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });

  const scenario = (path: string, method: string, form: URLSearchParams, mocked: Json, url: string) => {
    if (method === 'POST' && path === '/v1/payment_methods') {
      cards.set(String(mocked.id), form.get('card[number]') ?? '');
      return { status: 200, body: mocked };
    }
    if (method === 'POST' && path === '/v1/payment_intents') {
      const card = cards.get(form.get('payment_method') ?? '') ?? '';
      const declined = (code: string) => ({
        status: 402,
        body: {
          error: {
            type: 'card_error',
            code: 'card_declined',
            decline_code: code,
            message: 'Your card was declined.',
          },
        },
      });
      if (card === '4000000000000002') return declined('generic_decline');
      if (card === '4000000000009995') return declined('insufficient_funds');
      if (card === '4000000000000119')
        return { status: 500, body: { error: { type: 'api_error', message: 'An error occurred.' } } };
      const metadata: Record<string, string> = {};
      for (const [key, value] of form) {
        const name = /^metadata\[(.+)\]$/.exec(key)?.[1];
        if (name) metadata[name] = value;
      }
      const id = String(mocked.id);
      const intent: Json = {
        ...mocked,
        amount: Number(form.get('amount')),
        currency: form.get('currency'),
        metadata,
        payment_method: form.get('payment_method'),
        capture_method: form.get('capture_method') ?? double.captureMethod,
        status:
          card === '4000002760003184'
            ? 'requires_action'
            : (form.get('capture_method') ?? double.captureMethod) === 'manual'
              ? 'requires_capture'
              : 'succeeded',
        next_action:
          card === '4000002760003184'
            ? {
                type: 'redirect_to_url',
                redirect_to_url: { url: `${url}/3ds/${id}`, return_url: form.get('return_url') },
              }
            : null,
        last_payment_error: null,
      };
      intents.set(id, intent);
      return { status: 200, body: intent };
    }
    const capture = /^\/v1\/payment_intents\/([^/]+)\/capture$/.exec(path);
    if (method === 'POST' && capture) {
      const intent = intents.get(capture[1]!);
      if (!intent || intent.status !== 'requires_capture')
        return {
          status: 400,
          body: {
            error: {
              type: 'invalid_request_error',
              code: 'payment_intent_unexpected_state',
              message: 'This PaymentIntent could not be captured.',
            },
          },
        };
      intent.status = 'succeeded';
      intent.amount_received = intent.amount;
      return { status: 200, body: intent };
    }
    const canceled = /^\/v1\/payment_intents\/([^/]+)\/cancel$/.exec(path);
    if (method === 'POST' && canceled) {
      const intent = intents.get(canceled[1]!);
      if (!intent)
        return {
          status: 404,
          body: { error: { type: 'invalid_request_error', message: 'No such payment_intent' } },
        };
      // As Stripe: a succeeded (or already canceled) PaymentIntent cannot be canceled.
      if (intent.status === 'succeeded' || intent.status === 'canceled')
        return {
          status: 400,
          body: {
            error: {
              type: 'invalid_request_error',
              code: 'payment_intent_unexpected_state',
              message: `You cannot cancel this PaymentIntent because it has a status of ${String(intent.status)}.`,
            },
          },
        };
      intent.status = 'canceled';
      intent.next_action = null;
      intent.cancellation_reason = 'requested_by_customer';
      return { status: 200, body: intent };
    }
    const retrieved = /^\/v1\/payment_intents\/([^/]+)$/.exec(path);
    if (method === 'GET' && retrieved) {
      const intent = intents.get(retrieved[1]!);
      return intent
        ? { status: 200, body: intent }
        : {
            status: 404,
            body: { error: { type: 'invalid_request_error', message: 'No such payment_intent' } },
          };
    }
    // Refunds, kept as Stripe keeps them: a full refund of the PaymentIntent named, succeeded at once.
    if (method === 'POST' && path === '/v1/refunds') {
      const intent = intents.get(form.get('payment_intent') ?? '');
      const refund = {
        ...mocked,
        status: 'succeeded',
        payment_intent: form.get('payment_intent'),
        amount: intent?.amount ?? mocked.amount,
        currency: intent?.currency ?? mocked.currency,
      };
      refunds.set(String(mocked.id), refund);
      return { status: 200, body: refund };
    }
    const refunded = /^\/v1\/refunds\/([^/]+)$/.exec(path);
    if (method === 'GET' && refunded) {
      const refund = refunds.get(refunded[1]!);
      return refund
        ? { status: 200, body: refund }
        : { status: 404, body: { error: { type: 'invalid_request_error', message: 'No such refund' } } };
    }
    if (method === 'GET' && path === '/v1/refunds') {
      return {
        status: 200,
        body: { object: 'list', url: path, has_more: false, data: [...refunds.values()].reverse() },
      };
    }
    if (method === 'GET' && path === '/v1/payment_intents') {
      return {
        status: 200,
        body: { object: 'list', url: path, has_more: false, data: [...intents.values()].reverse() },
      };
    }
    return { status: 200, body: mocked };
  };

  let baseUrl = '';
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const body = await read(request);
      const target = new URL(request.url ?? '/', `http://127.0.0.1:${mockPort}`);
      const key = request.headers['idempotency-key'] as string | undefined;
      requests.push({ method: request.method ?? 'GET', path: target.pathname, idempotencyKey: key });
      const send = (status: number, json: Json) => {
        response.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_double' });
        response.end(JSON.stringify(json));
      };
      const replay = key ? answered.get(`${request.method} ${target.pathname} ${key}`) : undefined;
      if (replay) return send(replay.status, replay.body);

      const checked = await fetch(target, {
        method: request.method,
        headers: {
          authorization: String(request.headers.authorization ?? ''),
          'content-type': String(request.headers['content-type'] ?? 'application/x-www-form-urlencoded'),
        },
        ...(request.method === 'POST' ? { body } : {}),
      });
      const mocked = (await checked.json()) as Json;
      if (checked.status >= 400) {
        violations.push(`${request.method} ${target.pathname}: ${JSON.stringify(mocked)}`);
        return send(checked.status, mocked);
      }
      const answer = scenario(
        target.pathname,
        request.method ?? 'GET',
        new URLSearchParams(body),
        mocked,
        baseUrl,
      );
      if (key) answered.set(`${request.method} ${target.pathname} ${key}`, answer);
      if (loseNext && request.method === 'POST' && target.pathname === '/v1/payment_intents') {
        loseNext = false;
        request.socket.destroy(); // processed, but the answer never arrives
        return;
      }
      if (delayNext > 0 && request.method === 'POST' && target.pathname === '/v1/payment_intents') {
        const ms = delayNext;
        delayNext = 0;
        setTimeout(() => send(answer.status, answer.body), ms).unref();
        return;
      }
      send(answer.status, answer.body);
    })();
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${port}`;

  const double: StripeDouble = {
    url: baseUrl,
    captureMethod: 'automatic',
    violations,
    requests,
    intents,
    refunds,
    complete3ds(intentId, approve) {
      const intent = intents.get(intentId);
      if (!intent) throw new Error(`no payment intent ${intentId}`);
      intent.status = approve ? 'succeeded' : 'requires_payment_method';
      intent.next_action = null;
      intent.last_payment_error = approve
        ? null
        : { type: 'card_error', code: 'payment_intent_authentication_failure' };
    },
    delayNextIntentAnswer(ms: number) {
      delayNext = ms;
    },
    loseNextIntentAnswer() {
      loseNext = true;
    },
    async close() {
      await new Promise((resolve) => server.close(resolve));
      mock.kill('SIGTERM');
    },
  };
  return double;
}
