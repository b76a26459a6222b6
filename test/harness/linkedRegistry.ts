import { instanceEvent, instanceStream, type EventStore } from '@wagw/lib';
import { InstanceRegistry } from '../../services/sessions/src/registry/instanceRegistry';
import { testLogger } from './logger';
import { eventually } from './wait';

/**
 * Given an instance created and linked to `number` in `store`: the sessions service's registry started on it, once it
 * has folded the link (what a replica knows of an instance linked before it came).
 */
export const registryWithLinked = async (store: EventStore, instanceId: string, number = '4915112345678'): Promise<InstanceRegistry> => {
  const registry = new InstanceRegistry(store, testLogger());
  registry.start();
  const now = new Date().toISOString();
  await store.append(
    instanceStream(instanceId),
    [instanceEvent('InstanceCreated', now, { instance_id: instanceId, account: 'acme' }), instanceEvent('InstanceLinked', now, { number })],
    { expectedVersion: 0, commandId: `linked-${instanceId}` },
  );
  await eventually(
    async () => registry.isLinked(instanceId),
    (linked) => linked,
  );
  return registry;
};
