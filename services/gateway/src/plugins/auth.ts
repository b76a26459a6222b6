import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import { AppError, type Credential } from '@wagw/lib';
import { credentialRefusal, type Revocations } from '../auth/revocations';
import { authorize } from './scopes';

declare module 'fastify' {
  interface FastifyRequest {
    /** The account named by the caller's token (its `sub`). */
    account: string;
    /** The caller's verified token (null before authentication or when it was refused). */
    credential: Credential | null;
  }
}

/**
 * The credential a request carries, or undefined for none. An Authorization header that is not `Bearer <token>`
 * (another scheme, a token followed by more) is a credential sent wrong, not a missing one: invalid_token.
 */
const tokenOf = (request: FastifyRequest): string | undefined => {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw new AppError('unauthenticated', 'invalid_token', 'The Authorization header must be "Bearer <token>"');
    return match[1];
  }
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.access_token;
  if (typeof fromQuery === 'string') return fromQuery;
  // Repeated, the query parser makes it a list: a credential sent wrong, not a missing one.
  if (Array.isArray(fromQuery)) throw new AppError('unauthenticated', 'invalid_token', 'access_token more than once: send one credential');
  const fromBody = (request.body as Record<string, unknown> | undefined)?.access_token;
  return typeof fromBody === 'string' ? fromBody : undefined;
};

/** Why a request's credential was refused, until the hook that refuses it. */
const refused = new WeakMap<FastifyRequest, unknown>();

/** The account of a request whose credential was valid; '' before authentication or when it was not. */
export const authenticatedAccount = (request: FastifyRequest): string => request.account;

export interface AuthOptions {
  verify: (token: string | undefined) => Credential;
  revocations: Revocations;
  /** The rate limiter: runs after the credential was read and before it is refused, so it counts both. */
  rateLimiter?: preValidationAsyncHookHandler;
}

/**
 * Authenticates every route registered in this scope: a JWT as `Authorization: Bearer`, or `access_token` in the
 * query or the JSON body; a revoked token is refused (401 token_revoked), and an instance token is held to its
 * instance and scopes (`scopes.ts`). Runs before validation, so a request without a valid credential always answers
 * 401 (or 429 once its address sent too many).
 */
export const registerAuth = (app: FastifyInstance, { verify, revocations, rateLimiter }: AuthOptions): void => {
  app.decorateRequest('account', '');
  app.decorateRequest('credential', null);
  app.addHook('preValidation', async (request) => {
    try {
      const credential = verify(tokenOf(request));
      const refusal = credentialRefusal(credential, revocations);
      if (refusal) throw refusal;
      request.credential = credential;
      request.account = credential.account;
    } catch (error) {
      refused.set(request, error);
    }
  });
  if (rateLimiter) app.addHook('preValidation', rateLimiter);
  app.addHook('preValidation', async (request) => {
    if (refused.has(request)) throw refused.get(request);
    if (request.credential) authorize(request.credential, request);
  });
};
