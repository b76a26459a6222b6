import type { FastifyInstance } from 'fastify';
import { Histogram, redactUrl } from '@wagw/lib';

const duration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration by method, route and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
});

/** Records every request's duration, and logs it at debug level: its URL as redactUrl allows (no credential, no content). */
export const registerHttpMetrics = (app: FastifyInstance): void => {
  app.addHook('onResponse', async (request, reply) => {
    const seconds = reply.elapsedTime / 1000;
    const route = request.routeOptions.url ?? 'unmatched';
    duration.observe({ method: request.method, route, status_code: String(reply.statusCode) }, seconds);
    if (request.log.level === 'debug' || request.log.level === 'trace') {
      request.log.debug(
        { method: request.method, url: redactUrl(request.url, request.routeOptions.url !== undefined), statusCode: reply.statusCode, ms: reply.elapsedTime },
        'request',
      );
    }
  });
};
