import {
  assertPublicUrl,
  connectNats,
  createLogger,
  enableDefaultMetrics,
  JetStreamEventStore,
  KvWebhookSecretStore,
  loadInstancesProto,
  startGrpcServer,
  startOpsServer,
  type Logger,
} from '@wagw/lib';
import { InstanceDirectory, InstancesService } from './application';
import type { InstancesConfig } from './config';
import { instancesHandlers } from './grpc/instancesServer';

export interface RunningInstancesService {
  grpcPort: number;
  opsPort: number;
  close(): Promise<void>;
}

/** Starts the instances service: NATS, event store, secrets, read model, gRPC server and ops endpoints. */
export const startInstancesService = async (
  config: InstancesConfig,
  logger: Logger = createLogger('instances'),
): Promise<RunningInstancesService> => {
  enableDefaultMetrics('instances');
  const nats = await connectNats({ url: config.natsUrl, name: 'instances', logger });
  const store = await JetStreamEventStore.open(nats, { logger });
  const secrets = await KvWebhookSecretStore.open(nats);
  const directory = new InstanceDirectory(store, logger);
  directory.start();
  const service = new InstancesService({
    store,
    secrets,
    directory,
    checkWebhookUrl: (url) => assertPublicUrl(url, { allowPrivate: config.allowPrivateNetworks }),
  });
  const grpc = await startGrpcServer(loadInstancesProto().Instances.service, instancesHandlers(service, logger), config.grpcAddress);
  const ops = await startOpsServer({
    host: config.opsHost,
    port: config.opsPort,
    readiness: async () => {
      if (!nats.isConnected()) return { ready: false, reason: 'NATS is unreachable' };
      if (!(await directory.catchUp(1_000))) return { ready: false, reason: 'read model is catching up' };
      return { ready: true };
    },
  });
  logger.info({ grpcPort: grpc.port, opsPort: ops.port }, 'instances service started');
  return {
    grpcPort: grpc.port,
    opsPort: ops.port,
    close: async () => {
      await grpc.close();
      await ops.close();
      await directory.stop();
      await nats.close();
    },
  };
};
