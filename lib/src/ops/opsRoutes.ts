import type { FastifyInstance } from 'fastify';
import { metricsRegistry } from './metrics';

/** Reports whether the service can do its work now (its dependencies answer), with a reason when not. */
export type ReadinessCheck = () => Promise<{ ready: boolean; reason?: string }>;

/** How long a readiness check waits on NATS: within a probe's usual 1 s time-out, so a NATS that hangs gets a 503, not nothing. */
export const READINESS_WAIT_MS = 800;

/**
 * Ready when NATS is connected and `model` (a read model following the log) is current with it, asked within
 * READINESS_WAIT_MS: a NATS that hangs keeps its connection open until two pings go unanswered (10 s), where this
 * asks it within the probe's second. `behind` says what is not current.
 */
export const caughtUpReadiness =
  (nats: { isConnected(): boolean }, model: { catchUp(timeoutMs: number): Promise<boolean> }, behind: string): ReadinessCheck =>
  async () => {
    if (!nats.isConnected()) return { ready: false, reason: 'NATS is unreachable' };
    if (!(await model.catchUp(READINESS_WAIT_MS))) return { ready: false, reason: behind };
    return { ready: true };
  };

/** The ops routes' methods (an ops server answers another method on their paths 405). */
export const OPS_METHODS = ['GET', 'HEAD'] as const;

/**
 * `/healthz` (the process runs), `/readyz` (it can serve) and `/metrics` (Prometheus), outside any auth (untagged, so
 * the OpenAPI document leaves them out). Each answers HEAD too, as RFC 9110 §9.1 asks of GET: some load balancers
 * probe with it, and the gateway adds no HEAD route of its own (app.ts, `exposeHeadRoutes`).
 */
export const registerOpsRoutes = (app: FastifyInstance, readiness: ReadinessCheck): void => {
  const methods = [...OPS_METHODS];
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
