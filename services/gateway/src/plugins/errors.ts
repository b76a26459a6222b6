import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, retryAfterOf, type ErrorKind } from '@wagw/lib';

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

/**
 * A refusal with a status no ErrorKind names, made by the gateway's own HTTP edge (415 for a compressed body,
 * jsonBody.ts): answered with its status, code, message and headers as they are.
 */
export class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'HttpRefusal';
  }
}

const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'request_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_BAD_URL: 'bad_url',
  FST_ERR_MAX_PARAM_LENGTH: 'url_too_long',
};

/** Fastify's words where they do not say what to do ("Unsupported Media Type"); elsewhere its message is kept. */
export const FASTIFY_MESSAGES = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'The body must be JSON sent as Content-Type: application/json',
} as const;
const fastifyMessage = (code: string): string | undefined => (FASTIFY_MESSAGES as Record<string, string>)[code];

/** The answer to an error Fastify raised itself: its 4xx with our code for it; anything else is an internal error. */
const fastifyAnswer = (error: FastifyError): { status: number; body: { error: string; code: string } } => {
  const status = error.statusCode ?? 500;
  if (status >= 500) return { status: 500, body: { error: 'Internal error', code: 'internal' } };
  return { status, body: { error: fastifyMessage(error.code) ?? error.message, code: FASTIFY_CODES[error.code] ?? 'bad_request' } };
};

type ValidationErrors = NonNullable<FastifyError['validation']>;

/** The values a field at `path` may take, when every error Ajv gave for it is a `const` branch of one `anyOf`; else null. */
const allowedValues = (errors: ValidationErrors, path: string): string[] | null => {
  const at = errors.filter((e) => e.instancePath === path && e.keyword !== 'anyOf');
  if (at.length === 0 || at.some((e) => e.keyword !== 'const')) return null;
  return at.map((e) => String((e.params as { allowedValue?: unknown }).allowedValue));
};

/**
 * What a request got wrong, in Fastify's words (`querystring/limit must be <= 1000`: its default formatter's
 * `<part><path> <message>`, joined by ", "), except for a value outside a list (a union of literals: `type`, `enable`,
 * `status`, ...): Ajv says "must be equal to constant" once per allowed value and then "must match a schema in anyOf",
 * which names none. That becomes "querystring/type must be one of: text, media, ...".
 */
const validationMessage = (context: string, errors: ValidationErrors): string => {
  const lists = new Map<string, string[]>();
  for (const e of errors) {
    const values = e.keyword === 'anyOf' ? allowedValues(errors, e.instancePath) : null;
    if (values) lists.set(e.instancePath, values);
  }
  const parts: string[] = [];
  for (const e of errors) {
    const values = lists.get(e.instancePath);
    if (!values) parts.push(`${context}${e.instancePath} ${e.message ?? 'is invalid'}`);
    else if (e.keyword === 'anyOf') parts.push(`${context}${e.instancePath} must be one of: ${values.join(', ')}`);
  }
  return parts.join(', ');
};

/**
 * The 400 answer to input its schema refused (`context`: the part, e.g. `querystring`), from the validator's errors.
 * The error handler answers with it, and the OpenAPI document makes each operation's 400 example with it
 * (operationExamples.ts), so the two cannot word it differently.
 */
export const invalidRequestAnswer = (context: string, errors: ValidationErrors): { error: string; code: string } => ({
  error: `Invalid ${context}: ${validationMessage(context, errors)}`,
  code: fieldCodeOf(errors) ?? 'invalid_request',
});

/**
 * Fields whose every refusal has a code of its own (README, OpenAPI): the schema's (a URL over 2,048 characters) as
 * the route's checks (`assertCallableUrl`).
 */
const FIELD_CODES: Readonly<Record<string, string>> = {
  '/webhook_url': 'invalid_webhook_url',
  '/media_url': 'invalid_media_url',
  // The header's schema (at most 64 characters) as the webhooks service's check of its form.
  '/last-event-id': 'invalid_last_event_id',
};

/** The code of the one field the errors are about, when it has one. */
const fieldCodeOf = (errors: ValidationErrors): string | undefined => {
  const path = errors[0]?.instancePath;
  return path !== undefined && errors.every((e) => e.instancePath === path) ? FIELD_CODES[path] : undefined;
};

/** Errors answer `{ error, code }`; 5xx details stay in the log. */
export const registerErrorHandling = (app: FastifyInstance): void => {
  app.setErrorHandler((error: FastifyError | AppError | HttpRefusal, request, reply) => {
    // A handler that failed after setting a file's headers (a stream that broke before its first byte) still answers
    // the JSON error: the file's type, length and name go.
    reply.removeHeader('content-disposition').removeHeader('content-length').type('application/json; charset=utf-8');
    if (error instanceof AppError) {
      const status = HTTP_STATUS[error.kind];
      // A client that went away (it hears no answer) is no fault of ours; 503s (a dependency down or electing: the
      // client retries) are warnings; other 5xx are bugs.
      if (error.code === 'client_gone') request.log.debug({ code: error.code }, 'the client went away before the answer');
      else if (status === 503) request.log.warn({ err: error.cause ?? error, code: error.code }, 'request answered unavailable');
      else if (status >= 500) request.log.error({ err: error.cause ?? error, code: error.code }, 'request failed');
      // A client told to retry (429, 503) is told when: the service's own wait where it knows one, else a default.
      const retryAfter = retryAfterOf(error);
      if (retryAfter !== null) reply.header('retry-after', String(retryAfter));
      return reply.code(status).send({ error: error.kind === 'internal' ? 'Internal error' : error.message, code: error.code });
    }
    if (error instanceof HttpRefusal) return reply.code(error.status).headers(error.headers).send({ error: error.message, code: error.code });
    if (error.validation) return reply.code(400).send(invalidRequestAnswer(error.validationContext ?? 'request', error.validation));
    const { status, body } = fastifyAnswer(error);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    return reply.code(status).send(body);
  });
};

/** The parser's own words for what was wrong (llhttp's fixed texts, e.g. "Duplicate Content-Length"); else the message. */
const parserReason = (error: ConnectionError): string => ('reason' in error && typeof error.reason === 'string' ? error.reason : error.message);

/** The 431 of a request line and headers over Node's limit (the OpenAPI document shows it as it is). */
export const HEADERS_TOO_LARGE_ANSWER = {
  error: `The request line and headers are larger than ${maxHeaderSize} bytes`,
  code: 'headers_too_large',
} as const;

/** A malformed request the HTTP parser refused, as the envelope: its status, code and what was wrong. */
const clientErrorAnswer = (error: ConnectionError): { status: number; body: { error: string; code: string } } => {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, body: HEADERS_TOO_LARGE_ANSWER };
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, body: { error: 'The request did not arrive in time', code: 'request_timeout' } };
  // The parser's own words name the fault ("Parse Error: Invalid method encountered", "... Duplicate Content-Length").
  return { status: 400, body: { error: `Malformed HTTP request: ${error.message}`, code: 'bad_request' } };
};

/**
 * Fastify options for the errors raised before a route runs, which would otherwise answer Fastify's and Node's own
 * body (`{ error, message, statusCode }`, code FST_ERR_BAD_URL): requests the HTTP parser refused (bad method,
 * conflicting Content-Length, a NUL in a header, headers over the limit) and URLs the router cannot decode.
 */
export const frameworkErrorOptions = (log: FastifyBaseLogger) => ({
  clientErrorHandler: (error: ConnectionError, socket: Socket): void => {
    // A connection reset, or one already gone: nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, body } = clientErrorAnswer(error);
    // Named fields only: the parser's error carries `rawPacket`, the request's own bytes (its Authorization header,
    // an access_token in the URL, the body), which pino's err serializer would copy into the log whole.
    log.debug({ code: error.code, reason: parserReason(error), status }, 'malformed request refused');
    const json = JSON.stringify(body);
    // As Node and Fastify do: answer if the socket still takes writes, then close it (the parser cannot go on).
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
      );
    }
    socket.destroy(error);
  },
  frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const { status, body } = fastifyAnswer(error);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    void reply.code(status).send(body);
  },
});
