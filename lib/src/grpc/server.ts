import { Server, ServerCredentials, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Logger } from '../log';
import { callStreamServer } from './callServer';
import { healthService } from './health';
import { messageSizeOptions } from './messageSize';

export interface GrpcServer {
  readonly port: number;
  /** Ends the Call streams once their calls are answered, finishes the other calls in flight (forcing them after 5 s) and stops listening. */
  close(): Promise<void>;
}

/**
 * Binds one service on `address` (`host:port`; port 0 picks a free one). When the service defines `Call`
 * (proto/call.proto) it is served here, from the unary handlers: a service adds no code of its own for it. The
 * standard health service (`health.ts`) is served beside it.
 */
export const startGrpcServer = (definition: ServiceDefinition, handlers: UntypedServiceImplementation, address: string, logger: Logger): Promise<GrpcServer> =>
  new Promise((resolve, reject) => {
    const server = new Server(messageSizeOptions);
    const calls = definition.Call ? callStreamServer(definition, handlers, logger) : null;
    server.addService(definition, calls ? { ...handlers, Call: calls.handler } : handlers);
    const health = healthService();
    health.addToServer(server);
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, port) => {
      if (error) return reject(error);
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
            // Callers' readiness turns at once: no new work is sent here while the calls in flight finish.
            health.setStatus('', 'NOT_SERVING');
            // Streams the callers keep open would otherwise hold the shutdown until it is forced.
            calls?.drain();
            const force = setTimeout(() => server.forceShutdown(), 5_000);
            server.tryShutdown(() => {
              clearTimeout(force);
              done();
            });
          }),
      });
    });
  });
