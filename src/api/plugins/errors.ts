import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError, errorCatalogue, type ErrorCode } from '../../platform/errors';

const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'MALFORMED_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_JSON',
};

/** The one place errors become HTTP answers (docs/api.md, errors). Nothing internal leaks in a 5xx. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((_request, reply) => {
    void reply.status(404).send({ message: errorCatalogue.ROUTE_NOT_FOUND.message });
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    let apiError: ApiError;
    if (error instanceof ApiError) {
      apiError = error;
    } else if (error.code && fastifyCodes[error.code]) {
      apiError = new ApiError(fastifyCodes[error.code]!);
    } else {
      request.log.error({ err: error }, 'unhandled error');
      apiError = new ApiError('INTERNAL');
    }
    if (apiError.extra.retryAfterSeconds !== undefined) {
      void reply.header('retry-after', String(apiError.extra.retryAfterSeconds));
    }
    const body: Record<string, unknown> = { message: apiError.message };
    if (apiError.extra.errors) body.errors = apiError.extra.errors;
    void reply.status(apiError.status).send(body);
  });
}
