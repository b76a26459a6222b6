import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, invalidArgument, type Credential } from '@wagw/lib';
import { credentialRefusal, type Revocations } from '../auth/revocations';
import { headerCount } from './singleHeaders';
import { authorize } from './scopes';

declare module 'fastify' {
  interface FastifyRequest {
    /** The account named by the caller's token (its `sub`). */
    account: string;
    /** The caller's verified token (null before authentication or when it was refused). */
    credential: Credential | null;
  }
  interface FastifyContextConfig {
    /** A route of the authenticated API (counted by the rate limiter); set on every route of its scope. */
    api?: boolean;
  }
}

/**
 * A request carries one credential (RFC 6750 §2: one method per request). With two, no order of precedence is
 * guessed at: the one the client meant may not be the one that wins, and a wrong one beside a right one (a stale
 * token a library appends, another account's) would go unnoticed. Like access_token twice, that is a credential sent
 * wrong: invalid_token, whatever the credentials are, valid or not, the same or not.
 */
const oneCredential = (first: string, second: string) =>
  new AppError('unauthenticated', 'invalid_token', `A credential in the ${first} and in the ${second}: send one credential`);

/**
 * The credential a request carries in its Authorization header or its query, or undefined for none. An
 * Authorization header that is not `Bearer <token>` (another scheme, a token followed by more) is a credential sent
 * wrong, not a missing one: invalid_token.
 */
const headerOrQueryToken = (request: FastifyRequest): string | undefined => {
  const header = request.headers.authorization;
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.access_token;
  if (header && fromQuery !== undefined) throw oneCredential('Authorization header', 'query');
  if (header) {
    if (headerCount(request, 'authorization') > 1)
      throw new AppError('unauthenticated', 'invalid_token', 'Authorization header more than once: send one credential');
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw new AppError('unauthenticated', 'invalid_token', 'The Authorization header must be "Bearer <token>"');
    return match[1];
  }
  if (typeof fromQuery === 'string') return fromQuery;
  // Repeated, the query parser makes it a list: a credential sent wrong, not a missing one.
  if (Array.isArray(fromQuery)) throw new AppError('unauthenticated', 'invalid_token', 'access_token more than once: send one credential');
  return undefined;
};

/** The body's `access_token`, whatever its type (a non-string one is refused: `bodyToken`, or a second credential). */
const bodyCredential = (request: FastifyRequest): unknown => (request.body as Record<string, unknown> | null | undefined)?.access_token;

/**
 * The body's token when the credential is to be read there. A non-string one is a field of the wrong type (400, in
 * the schema's words), not a missing credential: the schema would say so, but it runs after the credential's check.
 */
const bodyToken = (request: FastifyRequest): string | undefined => {
  const fromBody = bodyCredential(request);
  if (fromBody !== undefined && typeof fromBody !== 'string') throw invalidArgument('invalid_request', 'Invalid body: body/access_token must be string');
  return fromBody;
};

/** Why a request's credential was refused, until the hook that refuses it. */
const refused = new WeakMap<FastifyRequest, unknown>();
/** API requests without a credential in their header or query: theirs may be in the body, read once it is parsed. */
const credentialInBody = new WeakSet<FastifyRequest>();

/** The account of a request whose credential was valid; '' before authentication or when it was not. */
export const authenticatedAccount = (request: FastifyRequest): string => request.account;

/** The rate limiter as the authentication drives it (`plugins/rateLimit.ts`). */
export interface RateLimiter {
  /** Counts a request for its account, or its address without a valid credential; throws 429 over the limit. */
  count(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Moves a request counted for its address to its account, whose credential was in the body; 429 over the limit. */
  recount(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

export interface AuthOptions {
  verify: (token: string | undefined) => Credential;
  revocations: Revocations;
  limiter?: RateLimiter;
}

/** Unknown paths under /v1 (404, or 405 for a known one) count too: they are API requests that name no route. */
const V1 = /^\/v1(?:[/?]|$)/;
const isApiRequest = (request: FastifyRequest): boolean => (request.is404 ? V1.test(request.url) : request.routeOptions.config.api === true);

/**
 * Authenticates the `/v1` API: a JWT as `Authorization: Bearer`, or `access_token` in the query or the JSON body, in
 * one of them only (`oneCredential`); a revoked token is refused (401 token_revoked), and an instance token is held to its instance and scopes
 * (`scopes.ts`). A request to a route without a valid credential answers 401 (or 429 once its address sent too
 * many), unless it is refused for what it is first (404, 405, an unreadable body or query).
 *
 * Every API request is counted before anything else is done with it or refused (`app`'s first onRequest hook): its
 * query parse, its body, a 404 or 405 and every 400 come after, so none of them is a way around the limit. Where
 * the request counts is decided by what is known then: a valid credential in the header or query counts for its
 * account, anything else for the client address. A credential in a JSON body can only be known once the body is
 * parsed, and parsing first would let a flood of bodies (invalid JSON among them) be parsed unlimited; so such a
 * request is counted for its address first (limited there like any request without a credential), and once its body
 * credential proves valid the count moves to its account (`recount`): body credentials keep the account's limit,
 * not the address's. The token is verified once either way: in onRequest when it came in the header or query, in
 * preValidation when in the body.
 *
 * Registers the onRequest part on `app` (the root, so that 404s and 405s pass it) and returns the part for the API
 * scope: it marks the scope's routes as API routes and reads, checks and refuses the credential in preValidation.
 */
export const registerAuth = (app: FastifyInstance, { verify, revocations, limiter }: AuthOptions): ((api: FastifyInstance) => void) => {
  const authenticate = (request: FastifyRequest, token: string | undefined): void => {
    try {
      const credential = verify(token);
      const refusal = credentialRefusal(credential, revocations);
      if (refusal) throw refusal;
      request.credential = credential;
      request.account = credential.account;
    } catch (error) {
      refused.set(request, error);
    }
  };

  app.decorateRequest('account', '');
  app.decorateRequest('credential', null);
  app.addHook('onRequest', async (request, reply) => {
    if (!isApiRequest(request)) return;
    let token: string | undefined;
    try {
      token = headerOrQueryToken(request);
    } catch (error) {
      refused.set(request, error);
    }
    if (token !== undefined) authenticate(request, token);
    else if (!refused.has(request)) credentialInBody.add(request);
    if (limiter) await limiter.count(request, reply);
  });

  return (api) => {
    api.addHook('onRoute', (route) => {
      route.config = { ...route.config, api: true };
    });
    api.addHook('preValidation', async (request, reply) => {
      if (credentialInBody.has(request)) {
        authenticate(request, bodyToken(request));
        if (request.credential && limiter) await limiter.recount(request, reply);
      } else if (bodyCredential(request) !== undefined) {
        // A credential came in the header or the query (valid or not): one in the body too is a second one.
        throw oneCredential(request.headers.authorization ? 'Authorization header' : 'query', 'body');
      }
      if (refused.has(request)) throw refused.get(request);
      if (request.credential) authorize(request.credential, request);
    });
  };
};
