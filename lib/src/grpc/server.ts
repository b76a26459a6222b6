import { Server, ServerCredentials, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';

export interface GrpcServer {
  readonly port: number;
  /** Finishes the calls in flight (forcing them after 5 s) and stops listening. */
  close(): Promise<void>;
}

/** Binds one service on `address` (`host:port`; port 0 picks a free one). */
export const startGrpcServer = (definition: ServiceDefinition, handlers: UntypedServiceImplementation, address: string): Promise<GrpcServer> =>
  new Promise((resolve, reject) => {
    const server = new Server();
    server.addService(definition, handlers);
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, port) => {
      if (error) return reject(error);
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
            const force = setTimeout(() => server.forceShutdown(), 5_000);
            server.tryShutdown(() => {
              clearTimeout(force);
              done();
            });
          }),
      });
    });
  });
