import type { FastifyInstance } from 'fastify';

/**
 * The API docs page's routes answer HEAD as their GET (RFC 9110 §9.1), like the console's files and the OpenAPI
 * document: they act on nothing. @fastify/swagger-ui registers them GET only and `exposeHeadRoutes` is off (app.ts),
 * so without this `HEAD /v1/docs/` was a 404, `HEAD /v1/docs` a 405 and `HEAD .../swagger-initializer.js` a 404 while
 * each GET answered 200. Registered before the 405 handler's hook, so that `Allow` names HEAD too.
 */
export const registerDocsHead = (app: FastifyInstance, prefix: string): void => {
  app.addHook('onRoute', (route) => {
    // The route's method is read after the onRoute hooks (Fastify 5's route.js): changing it here adds HEAD.
    if (route.method === 'GET' && route.url.startsWith(prefix)) route.method = ['GET', 'HEAD'];
  });
};
