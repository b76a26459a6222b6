import { ContentKeys, InMemoryKeyBucket, InMemoryWebhookSecretStore, type EventStore } from '@wagw/lib';
import { InstanceDirectory } from '../../services/instances/src/application/instanceDirectory';
import { InstancesService, type InstancesServiceDeps } from '../../services/instances/src/application/instancesService';
import { testLogger } from './logger';

export interface InstancesUnderTest {
  service: InstancesService;
  /** Started: it follows `store` as the service's does; stop it after the test. */
  directory: InstanceDirectory;
}

/** A directory on `store` that folds it from its beginning. */
const startedDirectory = (store: EventStore): InstanceDirectory => {
  const directory = new InstanceDirectory(store, testLogger());
  directory.start();
  return directory;
};

/**
 * The instances service of an application test on `store`, with in-memory secrets and data keys and every webhook URL
 * accepted, unless `deps` says otherwise: the one place the tests build it. `directory`: one the test started itself
 * (from a checkpoint, say).
 */
export const instancesOn = (
  store: EventStore,
  deps: Partial<Omit<InstancesServiceDeps, 'store' | 'directory'>> = {},
  directory = startedDirectory(store),
): InstancesUnderTest => {
  const service = new InstancesService({
    store,
    secrets: new InMemoryWebhookSecretStore(),
    directory,
    keys: new ContentKeys(new InMemoryKeyBucket()),
    checkWebhookUrl: async () => undefined,
    ...deps,
  });
  return { service, directory };
};
