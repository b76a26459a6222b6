import { credentials, loadPackageDefinition, type Client, type ServiceClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { HealthImplementation, protoPath } from 'grpc-health-check';

/**
 * The standard gRPC health service (grpc.health.v1, `grpc-health-check` from the gRPC team) on every service's gRPC
 * server: the gateway's readiness asks it, and so can any probe that speaks it (Kubernetes' gRPC probes,
 * grpc_health_probe). It answers SERVING while the process serves and NOT_SERVING once it begins to close.
 */
export const healthService = (): HealthImplementation => new HealthImplementation({ '': 'SERVING' });

interface HealthCheckClient extends Client {
  check(request: { service: string }, options: { deadline: number }, callback: (error: ServiceError | null, response?: { status: string }) => void): void;
}

let healthClient: ServiceClientConstructor | undefined;
const healthClientConstructor = (): ServiceClientConstructor => {
  if (!healthClient) {
    const definition = loadPackageDefinition(loadSync(protoPath, { keepCase: true, enums: String })) as unknown as {
      grpc: { health: { v1: { Health: ServiceClientConstructor } } };
    };
    healthClient = definition.grpc.health.v1.Health;
  }
  return healthClient;
};

/**
 * Whether the service behind `client`'s channel answers SERVING within `ms`. A connected channel is not enough: a
 * process that hangs (stopped, or its event loop stuck) keeps its TCP connection open and looks reachable to
 * `waitForReady` until the keepalive gives up (~30 s), while every call to it times out. The check rides the very
 * channel the calls use (`channelOverride`), so it asks the replicas they reach.
 */
export const healthProbe = (client: Client): ((ms: number) => Promise<boolean>) => {
  const channel = client.getChannel();
  const Health = healthClientConstructor();
  const health = new Health(channel.getTarget(), credentials.createInsecure(), { channelOverride: channel }) as unknown as HealthCheckClient;
  return (ms) =>
    new Promise((resolve) => {
      health.check({ service: '' }, { deadline: Date.now() + ms }, (error, response) => resolve(!error && response?.status === 'SERVING'));
    });
};
