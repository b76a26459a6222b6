import type { FastifyInstance, FastifyRequest } from 'fastify';

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

/**
 * Authenticates every route registered in this scope: a JWT as `Authorization: Bearer`, or `access_token` in the
 * query or the JSON body. Runs before validation, so a request without a valid credential always answers 401.
 */
export const registerAuth = (app: FastifyInstance, verify: (token: string | undefined) => string): void => {
  app.decorateRequest('account', '');
  app.addHook('preValidation', async (request) => {
    request.account = verify(tokenOf(request));
  });
};
