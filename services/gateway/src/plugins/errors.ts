import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError, type ErrorKind } from '@wagw/lib';

/** The one place an error becomes an HTTP status (DESIGN §7). */
export const HTTP_STATUS: Record<ErrorKind, number> = {
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'request_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
};

/** Errors answer `{ error, code }`; 5xx details stay in the log. */
export const registerErrorHandling = (app: FastifyInstance): void => {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    // A handler that failed after setting a file's headers (a stream that broke before its first byte) still answers
    // the JSON error: the file's type, length and name go.
    reply.removeHeader('content-disposition').removeHeader('content-length').type('application/json; charset=utf-8');
    if (error instanceof AppError) {
      const status = HTTP_STATUS[error.kind];
      // 503s (a dependency down or electing: the client retries) are warnings; other 5xx are bugs.
      if (status === 503) request.log.warn({ err: error.cause ?? error, code: error.code }, 'request answered unavailable');
      else if (status >= 500) request.log.error({ err: error.cause ?? error, code: error.code }, 'request failed');
      return reply.code(status).send({ error: error.kind === 'internal' ? 'Internal error' : error.message, code: error.code });
    }
    if (error.validation) {
      const field = error.validationContext ? `${error.validationContext}` : 'request';
      return reply.code(400).send({ error: `Invalid ${field}: ${error.message}`, code: 'invalid_request' });
    }
    const status = error.statusCode ?? 500;
    if (status < 500) {
      return reply.code(status).send({ error: error.message, code: FASTIFY_CODES[error.code] ?? 'bad_request' });
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({ error: 'Internal error', code: 'internal' });
  });
};
