import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalidArgument } from '@wagw/lib';

/**
 * How many times a header (lower-case name) came in a request. Node keeps one value of a repeated header in
 * `IncomingMessage.headers` (the first for Authorization, the values joined with ", " for most others), so a second
 * one would go unnoticed or read as a malformed value; the raw headers still hold them all.
 */
export const headerCount = (request: FastifyRequest, name: string): number => {
  const raw = request.raw.rawHeaders;
  let count = 0;
  // The length first: no lower-cased copy of every other header name on each request.
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.length === name.length && raw[i]?.toLowerCase() === name) count++;
  return count;
};

/**
 * The request headers of the API that hold one value, with the code their route answers for a bad one. Authorization
 * is not here: a second one is a credential sent wrong, refused with the credential (`auth.ts`).
 */
const SINGLE_HEADERS = [
  { name: 'idempotency-key', display: 'Idempotency-Key', code: 'invalid_idempotency_key' },
  { name: 'last-event-id', display: 'Last-Event-ID', code: 'invalid_last_event_id' },
] as const;

/**
 * Refuses an API request that gives one of these headers more than once (400 with the header's own code) rather than
 * taking the first, the last or their join: the client meant one of them, and which is not ours to guess. Runs after
 * the credential's check (a request without a valid one is a 401 whatever its headers) and before the schema's.
 */
export const registerSingleHeaders = (api: FastifyInstance): void => {
  // Callback style, not async: it runs on every request (`send` included), and an async hook costs each one a promise.
  api.addHook('preValidation', (request, _reply, done) => {
    const twice = SINGLE_HEADERS.find(({ name }) => request.headers[name] !== undefined && headerCount(request, name) > 1);
    done(twice ? invalidArgument(twice.code, `${twice.display} given more than once: send one`) : undefined);
  });
};
