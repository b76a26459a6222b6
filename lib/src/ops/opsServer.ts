import Fastify from 'fastify';
import { registerOpsRoutes, type ReadinessCheck } from './opsRoutes';

export interface OpsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** The HTTP side of a service that otherwise speaks gRPC: health, readiness and metrics only. */
export const startOpsServer = async (options: { host: string; port: number; readiness: ReadinessCheck }): Promise<OpsServer> => {
  const app = Fastify({ logger: false });
  registerOpsRoutes(app, options.readiness);
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () => app.close(),
  };
};
