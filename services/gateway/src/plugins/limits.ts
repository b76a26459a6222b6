import type { FastifyInstance } from 'fastify';

export const MAX_URL_LENGTH = 8 * 1024;

/**
 * Refuses oversized requests before any work: a declared body over the limit on any route (413), and a URL over
 * 8 KiB (414). Bodies sent without a length are capped by Fastify's own body limit on the routes that read them.
 */
export const registerLimits = (app: FastifyInstance, bodyLimit: number): void => {
  app.addHook('onRequest', async (request, reply) => {
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > bodyLimit) {
      return reply.code(413).send({ error: `Request body is larger than ${bodyLimit} bytes`, code: 'request_too_large' });
    }
    if (request.url.length > MAX_URL_LENGTH) {
      return reply.code(414).send({ error: `Request URL is longer than ${MAX_URL_LENGTH} characters`, code: 'url_too_long' });
    }
    return undefined;
  });
};
