import type { FastifyInstance } from 'fastify';
import { metricsRegistry } from './metrics';

/** Reports whether the service can do its work now (its dependencies answer), with a reason when not. */
export type ReadinessCheck = () => Promise<{ ready: boolean; reason?: string }>;

/**
 * `/healthz` (the process runs), `/readyz` (it can serve) and `/metrics` (Prometheus), outside any auth (untagged, so
 * the OpenAPI document leaves them out). Each answers HEAD too, as RFC 9110 §9.1 asks of GET: some load balancers
 * probe with it, and the gateway adds no HEAD route of its own (app.ts, `exposeHeadRoutes`).
 */
export const registerOpsRoutes = (app: FastifyInstance, readiness: ReadinessCheck): void => {
  const methods: ['GET', 'HEAD'] = ['GET', 'HEAD'];
  app.route({ method: methods, url: '/healthz', handler: async () => ({ status: 'ok' }) });
  app.route({
    method: methods,
    url: '/readyz',
    handler: async (_request, reply) => {
      const result = await readiness().catch((error: unknown) => ({ ready: false, reason: String(error) }));
      return reply.code(result.ready ? 200 : 503).send(result.ready ? { status: 'ready' } : { status: 'not_ready', reason: result.reason });
    },
  });
  app.route({
    method: methods,
    url: '/metrics',
    handler: async (_request, reply) => reply.type(metricsRegistry.contentType).send(await metricsRegistry.metrics()),
  });
};
