import { errorCatalogue, type ErrorCode } from '../schemas/errors';

export { errorCatalogue, type ErrorCode };

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
