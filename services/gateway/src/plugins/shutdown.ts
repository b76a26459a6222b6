import type { FastifyInstance } from 'fastify';
import { unavailable } from '@wagw/lib';

/**
 * Fastify answers a request that reaches a closing server itself (`return503OnClosing`): a bare 503 without
 * Retry-After or the error envelope, skipping every hook. Switched off, a hook refuses such a request instead, through
 * the one error model: 503 `server_shutting_down` with Retry-After, and the connection closed so that a load
 * balancer's keep-alive pool takes another replica for the next one.
 */
export const shutdownOptions = { return503OnClosing: false } as const;

/** Registers the refusal; answers whether the gateway is shutting down (from its first preClose hook on). */
export const registerShutdownRefusal = (app: FastifyInstance): (() => boolean) => {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    throw unavailable('server_shutting_down', 'This gateway replica is shutting down; retry (another replica answers)');
  });
  // The answers of requests taken before the shutdown close their connections too. Said `keep-alive`, the client
  // sent its next request on a connection the closing server was about to end: ECONNRESET, not knowing whether the
  // request was taken (a hunt saw 27 of 40 load connections reset at a SIGTERM). Closed by the answer, the client
  // opens another connection (to another replica).
  // A callback hook: it runs for every answer, and an async one costs a promise each.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  return () => closing;
};
