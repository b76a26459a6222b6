import {
  caughtUpReadiness,
  assertPublicUrl,
  createLogger,
  KvWebhookSecretStore,
  loadInstancesProto,
  startGrpcServer,
  type Logger,
  CheckpointStore,
  DEFAULT_CHECKPOINT_EVERY_MS,
  startServiceBase,
  type RunningService,
} from '@wagw/lib';
import { InstanceDirectory, InstancesService } from './application';
import { DEFAULT_INSTANCE_QUOTA, WEBHOOK_PRIVATE_NETWORKS_SETTING, type InstancesConfig } from './config';
import { instancesHandlers } from './grpc/instancesServer';

export type RunningInstancesService = RunningService;

/** Starts the instances service: NATS, event store, secrets, read model, gRPC server and ops endpoints. */
export const startInstancesService = async (config: InstancesConfig, logger: Logger = createLogger('instances')): Promise<RunningInstancesService> => {
  const base = 'the event store and the secrets bucket';
  const { ops, service, closeBase } = await startServiceBase('instances', config, logger, base, async ({ startup, nats, keys, events: store }) => {
    const secrets = await KvWebhookSecretStore.open(nats);
    const directory = new InstanceDirectory(store, logger);
    await directory.startFromCheckpoint(await CheckpointStore.open(nats), config.checkpointEveryMs ?? DEFAULT_CHECKPOINT_EVERY_MS);
    const instances = new InstancesService({
      store,
      secrets,
      directory,
      keys,
      checkWebhookUrl: (url) => assertPublicUrl(url, { allowPrivate: config.allowPrivateNetworks, setting: WEBHOOK_PRIVATE_NETWORKS_SETTING }),
      instanceQuota: config.instanceQuota ?? DEFAULT_INSTANCE_QUOTA,
    });
    const grpc = await startGrpcServer(loadInstancesProto().Instances.service, instancesHandlers(instances, logger), config.grpcAddress, logger);
    startup.started(caughtUpReadiness(nats, directory, 'read model is catching up'));
    return { directory, grpc, instances };
  });
  const { directory, grpc, instances } = service;
  logger.info({ grpcPort: grpc.port, opsPort: ops.port }, 'instances service started');
  return {
    grpcPort: grpc.port,
    opsPort: ops.port,
    close: async () => {
      await grpc.close();
      await ops.close();
      instances.close();
      await directory.stop();
      await closeBase();
    },
  };
};
