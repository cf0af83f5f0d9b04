/** Every error a merchant can see. One code, one HTTP status, one message (docs/api.md, errors). */
export const errorCatalogue = {
  AUTH_MISSING: { status: 401, message: 'Authentication token is missing.' },
  AUTH_INVALID: { status: 401, message: 'Invalid Secret Key.' },
  ENVELOPE_INVALID: { status: 400, message: 'Encryption Key is invalid.' },
  MALFORMED_JSON: { status: 400, message: 'The request body is not valid JSON.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request body must be application/json.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Payload too large.' },
  VALIDATION: { status: 422, message: 'The given data was invalid.' },
  ORDER_CONFLICT: { status: 409, message: 'The order id has already been taken.' },
  TRANSACTION_NOT_FOUND: { status: 404, message: 'Transaction not found.' },
  ROUTE_NOT_FOUND: { status: 404, message: 'Not Found.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'The method is not allowed for this URL.' },
  BAD_URL: { status: 400, message: 'The request URL is malformed.' },
  URL_TOO_LONG: { status: 414, message: 'The request URL is too long.' },
  BAD_REQUEST: { status: 400, message: 'Bad Request.' },
  RATE_LIMITED: { status: 429, message: 'Too Many Attempts.' },
  UNAVAILABLE: { status: 503, message: 'Service Unavailable.' },
  INTERNAL: { status: 500, message: 'Server Error.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly extra: { errors?: Record<string, string[]>; retryAfterSeconds?: number } = {},
  ) {
    super(message ?? errorCatalogue[code].message);
  }

  get status(): number {
    return errorCatalogue[this.code].status;
  }
}

/** A 422 naming each failing field; the top-level message is the first field's first message. */
export function validationError(errors: Record<string, string[]>): ApiError {
  const first = Object.values(errors)[0]?.[0] ?? errorCatalogue.VALIDATION.message;
  return new ApiError('VALIDATION', first, { errors });
}

/** Throws the 422 for one field. */
export function fieldError(field: string, message: string): never {
  throw validationError({ [field]: [message] });
}
