import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The account named by the caller's token (its `sub`). */
    account: string;
  }
}

const tokenOf = (request: FastifyRequest): string | undefined => {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    return match ? match[1] : '';
  }
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.access_token;
  if (typeof fromQuery === 'string') return fromQuery;
  const fromBody = (request.body as Record<string, unknown> | undefined)?.access_token;
  return typeof fromBody === 'string' ? fromBody : undefined;
};

/** Why a request's credential was refused, until the hook that refuses it. */
const refused = new WeakMap<FastifyRequest, unknown>();

/** The account of a request whose credential was valid; '' before authentication or when it was not. */
export const authenticatedAccount = (request: FastifyRequest): string => request.account;

/**
 * Authenticates every route registered in this scope: a JWT as `Authorization: Bearer`, or `access_token` in the
 * query or the JSON body. Runs before validation, so a request without a valid credential always answers 401;
 * `between` (the rate limiter) runs after the credential was read and before it is refused, so it counts both.
 */
export const registerAuth = (app: FastifyInstance, verify: (token: string | undefined) => string, between?: preValidationAsyncHookHandler): void => {
  app.decorateRequest('account', '');
  app.addHook('preValidation', async (request) => {
    try {
      request.account = verify(tokenOf(request));
    } catch (error) {
      refused.set(request, error);
    }
  });
  if (between) app.addHook('preValidation', between);
  app.addHook('preValidation', async (request) => {
    if (refused.has(request)) throw refused.get(request);
  });
};
