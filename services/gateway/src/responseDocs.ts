import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { MAX_URL_LENGTH, URL_TOO_LONG_ANSWER } from './plugins/limits';
import { FASTIFY_MESSAGES, HEADERS_TOO_LARGE_ANSWER } from './plugins/errors';

/**
 * What the OpenAPI document says about answers beyond each route's own body: response headers, the error statuses and
 * their examples, and the statuses every route answers alike (405, 414, 415, 431), added by one rule instead of by hand on
 * each route. @fastify/swagger writes a response schema's `headers` into the document as that response's headers.
 */

/** Every response header the document names, defined once (a header schema is OpenAPI 3.0: `example`, not `examples`). */
export const RESPONSE_HEADERS = {
  'Retry-After': Type.Integer({ minimum: 0, description: 'Seconds to wait before retrying' }),
  'RateLimit-Limit': Type.Integer({
    minimum: 1,
    description: 'Requests allowed per window (IETF draft RateLimit headers; set when the gateway limits requests)',
  }),
  'RateLimit-Remaining': Type.Integer({ minimum: 0, description: 'Requests left in the current window' }),
  'RateLimit-Reset': Type.Integer({ minimum: 0, description: 'Seconds until the current window ends' }),
  Allow: Type.String({ description: 'The methods the path takes', example: 'GET, POST' }),
  'Content-Disposition': Type.String({
    description: "`attachment`, with the sender's file name when it gave one (an ASCII `filename` and the exact `filename*`)",
    example: `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`,
  }),
};

type HeaderName = keyof typeof RESPONSE_HEADERS;
const headers = (...names: HeaderName[]) => Object.fromEntries(names.map((name) => [name, RESPONSE_HEADERS[name]]));

/** The rate limiter's headers, on every /v1 answer that reached it (app.ts: a preValidation hook). */
export const RATE_LIMIT_HEADERS = headers('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset');

/** `Content-Disposition` (GET /v1/media). */
export const CONTENT_DISPOSITION_HEADER = headers('Content-Disposition');

export interface ErrorExample {
  error: string;
  code: string;
}

interface ErrorDoc {
  description: string;
  /**
   * A code the server really answers with this status, and its message (the document's example of the status). None
   * where the answer differs by operation (400, 403, 405, 413): operationExamples.ts makes each operation's own from
   * the code that answers it.
   */
  example?: ErrorExample;
  headers?: Record<string, TSchema>;
}

/** Each error status the document names: what it means, an example the server really sends, and its headers. */
const ERROR_DOCS: Record<number, ErrorDoc> = {
  400: { description: 'Invalid input (`invalid_request` names the field; other codes name the check)' },
  401: {
    description: 'Missing, malformed, wrongly signed, expired or revoked credential, or more than one (send one credential)',
    example: { error: 'The token is malformed or its signature is wrong', code: 'invalid_token' },
  },
  403: {
    description: 'An instance token on an operation outside its scopes (`insufficient_scope`) or on an account operation (`account_token_required`)',
  },
  404: {
    description: "Unknown instance (or another account's), or what the operation names",
    example: { error: 'Instance not found', code: 'instance_not_found' },
  },
  405: { description: 'The path does not take this method; `Allow` lists those it takes', headers: headers('Allow') },
  413: { description: 'The request body is over the limit (`request_too_large`)' },
  414: {
    description: `The URL is longer than 8 KiB (${MAX_URL_LENGTH} characters): send long text (a message, a vCard) with the POST form`,
    example: URL_TOO_LONG_ANSWER,
  },
  415: {
    description:
      'The body is not `application/json` (`text/plain` included) or says a charset other than UTF-8 (`unsupported_media_type`), or it is compressed: a `Content-Encoding` other than `identity` (`unsupported_content_encoding`, with `Accept-Encoding: identity`). Send uncompressed JSON',
    example: { error: FASTIFY_MESSAGES.FST_ERR_CTP_INVALID_MEDIA_TYPE, code: 'unsupported_media_type' },
  },
  431: {
    description: 'The request line and headers together are over 16 KiB (an oversized cookie or Idempotency-Key, say)',
    example: HEADERS_TOO_LARGE_ANSWER,
  },
  429: {
    description: 'Rate limited, or a quota or queue is full: retry after `Retry-After` seconds',
    example: { error: 'Rate limit of 6000 requests per 60 s reached for this account; retry in 12 seconds', code: 'rate_limited' },
    headers: { ...headers('Retry-After'), ...RATE_LIMIT_HEADERS },
  },
  503: {
    description:
      'A dependency is down or electing a leader (`event_store_unavailable`, `service_unavailable`), a backend service did not answer in time (`service_timeout`), or the instance was changed concurrently by another request more often than the service retries (`concurrent_update`): retry after `Retry-After` seconds',
    example: { error: 'The event store (NATS) is unreachable', code: 'event_store_unavailable' },
    headers: headers('Retry-After'),
  },
};

const ErrorFields = {
  error: Type.String({ description: 'What went wrong, for a person' }),
  code: Type.String({ description: 'Stable machine-readable code, e.g. instance_not_found' }),
};

/**
 * The `{ error, code }` answer of one status, with that status's own description, example and headers; `own`: what
 * one operation answers differently (its example, description or headers).
 */
export const errorResponse = (status: number, own: Partial<ErrorDoc> = {}) => {
  const base = ERROR_DOCS[status];
  if (!base) throw new Error(`No documentation for error status ${status}: add it to ERROR_DOCS (a 409: conflictResponse)`);
  const doc = { ...base, ...own };
  return Type.Object(ErrorFields, {
    description: doc.description,
    ...(doc.example && { examples: [doc.example] }),
    ...(doc.headers && { headers: doc.headers }),
  });
};

/**
 * GET /v1/media's 413: the received file is over the download cap. The sessions service answers it, in its connectors'
 * words (sandboxMedia.ts, baileys/mediaDownload.ts) and inboundOps.ts's advice; a request body over the limit is
 * refused as on every route.
 */
export const MEDIA_TOO_LARGE_RESPONSE = {
  413: errorResponse(413, {
    description:
      'The received file is over the download cap, MEDIA_DOWNLOAD_MAX_BYTES (`media_too_large`), or the request body over the limit (`request_too_large`)',
    example: {
      error: 'The media is 20971520 bytes, over the 16777216-byte download cap; raise MEDIA_DOWNLOAD_MAX_BYTES to fetch it',
      code: 'media_too_large',
    },
  }),
};

/**
 * Each 409 code, when the server answers it, and a message it sends with it. Not in ERROR_DOCS: what conflicts differs
 * by operation (a send finds the instance unlinked, a replay its webhook off), so one shared example would tell most
 * operations' clients of a code they never get.
 */
const CONFLICTS = {
  instance_quota_reached: {
    when: 'the account has its quota of instances, INSTANCE_QUOTA',
    error: 'The account has 100 of its 100 instances; reset and reuse one, or ask for a higher quota',
  },
  not_linked: { when: 'the instance was never linked, or was reset since', error: 'The instance is not linked: scan a QR code first (get_qrcode)' },
  instance_logged_out_on_phone: {
    when: 'or another `instance_<reason>`: the instance is logged out or failed, for the reason status shows as last_disconnect_reason',
    error: 'The instance cannot send: logged_out_on_phone; scan a new QR code',
  },
  message_not_sent: {
    when: 'the message replied or reacted to is a send of this instance that failed (WhatsApp never had it)',
    error: 'quoted_message_id: message m_7f64c90477e34e8a98f377acb0790842 failed to send: WhatsApp never had it; nothing to reply or react to',
  },
  idempotency_key_reused: {
    when: 'the Idempotency-Key was used for another request of its kind (another message; a replay of another window)',
    error: 'This Idempotency-Key was used for another message of this instance; use a new key for a new message',
  },
  not_connected: { when: 'the instance has no open connection', error: 'The instance is not connected: groups are listed over its connection' },
  already_connected: { when: 'the instance is connected: no code is needed', error: 'The instance is connected; no QR code is needed' },
  already_linked: {
    when: 'the instance is linked and its connection is coming back',
    error: 'The instance is linked and its connection is coming back: no QR code comes for it; reset_instance first to link another phone',
  },
  instance_failed: {
    when: 'WhatsApp refused the instance (403, 405: status `failed`) and it keeps its link: reconnect tries it again, reset_instance drops it',
    error:
      'The instance failed (forbidden): WhatsApp refused its link; reconnect to try that link again, or reset_instance and link a phone anew with get_qrcode',
  },
  webhook_disabled: {
    when: 'the webhook is off',
    error: 'The webhook is off; switch it on (/v1/set_webhook with enable=true) before replaying events to it',
  },
  delivery_not_failed: {
    when: 'the delivery named is not dead',
    error: 'Delivery evt_12_0 is delivered; only failed deliveries can be redelivered',
  },
  delivery_changed: {
    when: 'the delivery named changed meanwhile',
    error: 'The delivery changed meanwhile (redelivered or retried); list it again',
  },
  no_qr_waiting: {
    when: 'no QR code waits to be scanned',
    error: 'No QR code of instance 6F1C0A9B3D2E4F5A6B7C is waiting to be scanned: start a connection (get_qrcode) first',
  },
  sandbox_only: {
    when: 'the sessions service does not run the sandbox connector',
    error: 'This works only with the sandbox connector (WA_CONNECTOR=sandbox)',
  },
} as const;

export type ConflictCode = keyof typeof CONFLICTS;

/**
 * The 409 of an operation: the codes it answers with 409, each with when, and the first one's message as the example
 * (`error`: the message this operation sends with it, where its words differ by operation, as not_connected's do).
 * `instance_logged_out_on_phone` stands for every `instance_<reason>`.
 */
export const conflictResponse = (codes: readonly [ConflictCode, ...ConflictCode[]], error?: string) => {
  const [first] = codes;
  const description = `Refused in the current state of the instance, account or service: ${codes.map((code) => `\`${code}\` (${CONFLICTS[code].when})`).join('; ')}`;
  return { 409: Type.Object(ErrorFields, { description, examples: [{ error: error ?? CONFLICTS[first].error, code: first }] }) };
};

/**
 * Documents on every route of `app`'s scope what the gateway answers for all of them: 405 with Allow (any path, another
 * method: plugins/methodNotAllowed.ts), 414 on a GET (a URL over 8 KiB: plugins/limits.ts; the GET forms carry their
 * input in it), 415 where a JSON body is taken (another Content-Type), 431 (headers over Node's limit: plugins/errors.ts),
 * and the RateLimit-* headers on the 200. Registered
 * before the routes: an onRoute hook may still change the schema, which @fastify/swagger reads when it builds the document.
 */
export const registerResponseDocs = (app: FastifyInstance): void => {
  app.addHook('onRoute', (route) => {
    const schema: FastifySchema | undefined = route.schema;
    if (!schema?.response) return;
    const response = schema.response as Record<string, unknown>;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const statuses = [405, ...(methods.includes('GET') ? [414] : []), ...(schema.body ? [415] : []), 431];
    const ok = response[200];
    const withRateLimit =
      typeof ok === 'object' && ok !== null
        ? { ...ok, headers: { ...RATE_LIMIT_HEADERS, ...('headers' in ok && typeof ok.headers === 'object' ? ok.headers : {}) } }
        : ok;
    route.schema = {
      ...schema,
      response: { ...response, ...(ok !== undefined && { 200: withRateLimit }), ...Object.fromEntries(statuses.map((s) => [s, errorResponse(s)])) },
    };
  });
};
