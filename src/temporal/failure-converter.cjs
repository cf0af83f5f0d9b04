// @ts-check
// CommonJS, so the Temporal SDK can require it by path from a worker, its workflow bundle and a client,
// whichever loader runs them.
const { ApplicationFailure, DefaultFailureConverter } = require('@temporalio/common');

/**
 * The failure types whose messages the service wrote for people to read: the business outcomes, the
 * connector's "not processed" and "outcome unknown", a send that ran late, update refusals, a run refused as not the service's
 * and a step refused because the transaction is final (`failureTypes` in
 * src/contracts/failures.ts; test/unit/failure-converter.test.ts keeps the two lists equal).
 */
const READABLE = new Set([
  'CardDeclined',
  'NotFound',
  'InsufficientFunds',
  'WalletInactive',
  'ConnectorNotProcessed',
  'ConnectorOutcomeUnknown',
  'LateAttempt',
  'UpdateRefused',
  'NotTheServiceRun',
  'TransactionAlreadyFinal',
]);

/**
 * How failures reach Temporal's history: never with a stack trace (it would show our file paths in the
 * UI), and with their message encoded as a payload, so the payload codec encrypts it like every argument
 * and result (a driver's or a library's error text may echo data). Only the messages the service wrote
 * for people stay readable: a decline as the merchant reads it, an update refusal as ops read it in the
 * Temporal UI's dialog (which shows refusals as they come, without the codec).
 */
class StacklessFailureConverter extends DefaultFailureConverter {
  constructor() {
    super({ encodeCommonAttributes: true });
  }

  /** @type {DefaultFailureConverter['errorToFailure']} */
  errorToFailure(err, payloadConverter, context) {
    if (err instanceof ApplicationFailure && READABLE.has(err.type ?? ''))
      return this.errorToFailureInner(err, payloadConverter, context);
    return super.errorToFailure(err, payloadConverter, context);
  }

  /** @type {DefaultFailureConverter['errorToFailureInner']} */
  errorToFailureInner(err, payloadConverter, context) {
    const failure = super.errorToFailureInner(err, payloadConverter, context);
    failure.stackTrace = '';
    return failure;
  }
}

exports.failureConverter = new StacklessFailureConverter();
exports.READABLE_FAILURE_TYPES = READABLE;
