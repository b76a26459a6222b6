import type { FastifyInstance } from 'fastify';

export const MAX_URL_LENGTH = 8 * 1024;

/** The 413 of a request body over `bodyLimit` bytes (also the OpenAPI document's example of it). */
export const bodyTooLargeAnswer = (bodyLimit: number) => ({ error: `Request body is larger than ${bodyLimit} bytes`, code: 'request_too_large' });

/** The 414 of a URL over MAX_URL_LENGTH (also the OpenAPI document's example of it). */
export const URL_TOO_LONG_ANSWER = { error: `Request URL is longer than ${MAX_URL_LENGTH} characters`, code: 'url_too_long' };

/**
 * Refuses oversized requests before any work: a declared body over the limit on any route (413), and a URL over
 * 8 KiB (414). Bodies sent without a length are capped by Fastify's own body limit on the routes that read them.
 */
export const registerLimits = (app: FastifyInstance, bodyLimit: number): void => {
  app.addHook('onRequest', async (request, reply) => {
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > bodyLimit) {
      return reply.code(413).send(bodyTooLargeAnswer(bodyLimit));
    }
    if (request.url.length > MAX_URL_LENGTH) {
      return reply.code(414).send(URL_TOO_LONG_ANSWER);
    }
    return undefined;
  });
};
