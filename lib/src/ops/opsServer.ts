import Fastify from 'fastify';
import { invalidArgument, methodNotAllowedAnswer, routeNotFoundBody } from '../errors';
import { OPS_METHODS, registerOpsRoutes, type ReadinessCheck } from './opsRoutes';

export interface OpsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** What `listen` answers for a host that is not one of this machine's addresses. */
const HOST_ERRORS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL', 'EINVAL']);

/** The HTTP side of a service that otherwise speaks gRPC: health, readiness and metrics only. */
export const startOpsServer = async (options: { host: string; port: number; readiness: ReadinessCheck }): Promise<OpsServer> => {
  const app = Fastify({ logger: false });
  registerOpsRoutes(app, options.readiness);
  // Answered in the project's error model, as the gateway answers (Fastify's own 404 body has another shape).
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    if (!OPS_METHODS.some((method) => app.hasRoute({ url: path, method }))) return reply.code(404).send(routeNotFoundBody(request.method, path));
    const { allow, body } = methodNotAllowedAnswer(request.method, path, OPS_METHODS);
    return reply.code(405).header('allow', allow).send(body);
  });
  await app.listen({ host: options.host, port: options.port }).catch((error: unknown) => {
    // A host that is no address of this machine: a setting to change (exit 78), not a crash to restart for ever.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && HOST_ERRORS.has(code)) {
      throw invalidArgument(
        'bad_config',
        `OPS_HOST ${options.host}: cannot listen there (${code}); give an address of this machine, e.g. 127.0.0.1 or 0.0.0.0`,
      );
    }
    throw error;
  });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () => app.close(),
  };
};
