import type { FastifyInstance } from 'fastify';
import { metricsRegistry } from './metrics';

/** Reports whether the service can do its work now (its dependencies answer), with a reason when not. */
export type ReadinessCheck = () => Promise<{ ready: boolean; reason?: string }>;

/** `/healthz` (the process runs), `/readyz` (it can serve) and `/metrics` (Prometheus), outside any auth (untagged, so the OpenAPI document leaves them out). */
export const registerOpsRoutes = (app: FastifyInstance, readiness: ReadinessCheck): void => {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const result = await readiness().catch((error: unknown) => ({ ready: false, reason: String(error) }));
    return reply.code(result.ready ? 200 : 503).send(result.ready ? { status: 'ready' } : { status: 'not_ready', reason: result.reason });
  });
  app.get('/metrics', async (_request, reply) => reply.type(metricsRegistry.contentType).send(await metricsRegistry.metrics()));
};
