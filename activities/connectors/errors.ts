/**
 * How a connector call can fail short of a business answer. The difference decides what the workflow may
 * do next: only a call that was certainly not processed may be cascaded to another terminal or have its
 * reservation released; a call whose outcome is unknown must be asked about until the connector knows.
 */

/** The connector certainly did not act on the request (refused before processing, an outage answer). */
export class NotProcessedError extends Error {}

/** The request may have been processed: the answer was lost (timeout after sending, connection reset). */
export class OutcomeUnknownError extends Error {}

export type { Lookup } from '../../src/contracts';
