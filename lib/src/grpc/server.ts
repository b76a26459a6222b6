import { Server, ServerCredentials, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { Logger } from '../log';
import { callStreamServer } from './callServer';
import { messageSizeOptions } from './messageSize';

export interface GrpcServer {
  readonly port: number;
  /** Ends the Call streams once their calls are answered, finishes the other calls in flight (forcing them after 5 s) and stops listening. */
  close(): Promise<void>;
}

/**
 * Binds one service on `address` (`host:port`; port 0 picks a free one). When the service defines `Call`
 * (proto/call.proto) it is served here, from the unary handlers: a service adds no code of its own for it.
 */
export const startGrpcServer = (definition: ServiceDefinition, handlers: UntypedServiceImplementation, address: string, logger: Logger): Promise<GrpcServer> =>
  new Promise((resolve, reject) => {
    const server = new Server(messageSizeOptions);
    const calls = definition.Call ? callStreamServer(definition, handlers, logger) : null;
    server.addService(definition, calls ? { ...handlers, Call: calls.handler } : handlers);
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, port) => {
      if (error) return reject(error);
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
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
