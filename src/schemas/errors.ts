/**
 * Every error a merchant can see. One code, one HTTP status, one message, and when it happens (the API
 * reference's error table; docs/api.md, errors).
 */
export const errorCatalogue = {
  AUTH_MISSING: { status: 401, message: 'Authentication token is missing.', when: 'No bearer token.' },
  AUTH_INVALID: {
    status: 401,
    message: 'Invalid Secret Key.',
    when: 'The bearer token is not a valid key, or is the other mode’s.',
  },
  ENVELOPE_INVALID: {
    status: 400,
    message: 'Encryption Key is invalid.',
    when: 'The envelope does not decrypt to a JSON object with the merchant’s key.',
  },
  MALFORMED_JSON: {
    status: 400,
    message: 'The request body is not valid JSON.',
    when: 'The body is not JSON.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'The request body must be application/json.',
    when: 'The body is not `application/json`.',
  },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Payload too large.', when: 'The body is over 64 KiB.' },
  VALIDATION: {
    status: 422,
    message: 'The given data was invalid.',
    when: 'A field fails its rule; `errors` has every failing field.',
  },
  ORDER_CONFLICT: {
    status: 409,
    message: 'The order id has already been taken.',
    when: '`order_id` reused with other fields.',
  },
  IDEMPOTENCY_CONFLICT: {
    status: 409,
    message: 'The Idempotency-Key has already been used for another request.',
    when: '`Idempotency-Key` reused with other fields.',
  },
  TRANSACTION_NOT_FOUND: {
    status: 404,
    message: 'Transaction not found.',
    when: 'No such transaction of this merchant and mode.',
  },
  LINK_NOT_FOUND: {
    status: 404,
    message: 'Payment link not found.',
    when: 'No such payment link of this merchant and mode.',
  },
  ROUTE_NOT_FOUND: {
    status: 404,
    message: 'Not Found.',
    when: 'Unknown route or mode, or a test-mode endpoint called in live mode.',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    message: 'The method is not allowed for this URL.',
    when: 'A known URL asked with a method it does not take; `Allow` lists those it takes.',
  },
  BAD_URL: {
    status: 400,
    message: 'The request URL is malformed.',
    when: 'Malformed percent-encoding in the URL.',
  },
  URL_TOO_LONG: {
    status: 414,
    message: 'The request URL is too long.',
    when: 'A path segment over 191 characters.',
  },
  BAD_REQUEST: { status: 400, message: 'Bad Request.', when: 'Another malformed request.' },
  RATE_LIMITED: {
    status: 429,
    message: 'Too Many Attempts.',
    when: 'Over the rate limit; retry after `Retry-After` seconds.',
  },
  UNAVAILABLE: {
    status: 503,
    message: 'Service Unavailable.',
    when: 'The database or workflow engine cannot be reached; send the same request again.',
  },
  INTERNAL: {
    status: 500,
    message: 'Server Error.',
    when: 'Anything unexpected; the `x-request-id` header identifies the request.',
  },
} as const satisfies Record<string, { status: number; message: string; when: string }>;

export type ErrorCode = keyof typeof errorCatalogue;
