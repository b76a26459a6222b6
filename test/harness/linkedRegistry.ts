import { instanceEvent, instanceStream, type EventStore, type InstanceEvent } from '@wagw/lib';
import { InstanceRegistry } from '../../services/sessions/src/registry/instanceRegistry';
import { testLogger } from './logger';

export interface LinkedOptions {
  /** The number the instance is linked to. */
  number?: string;
  /** The instance's events after its link (say `InstanceConnected`, `InstanceFailed`), in order. */
  then?: InstanceEvent[];
}

/**
 * Given an instance created and linked (then what `then` adds) in `store`: the sessions service's registry started on
 * it, once it has folded every one of those events (what a replica knows of an instance linked before it came).
 */
export const registryWithLinked = async (store: EventStore, instanceId: string, options: LinkedOptions = {}): Promise<InstanceRegistry> => {
  const { number = '4915112345678', then = [] } = options;
  const registry = new InstanceRegistry(store, testLogger());
  registry.start();
  const now = new Date().toISOString();
  await store.append(
    instanceStream(instanceId),
    [instanceEvent('InstanceCreated', now, { instance_id: instanceId, account: 'acme' }), instanceEvent('InstanceLinked', now, { number }), ...then],
    { expectedVersion: 0, commandId: `linked-${instanceId}` },
  );
  if (!(await registry.reach(instanceId, 5_000))) throw new Error(`the registry did not fold ${instanceId}'s events within 5 s`);
  return registry;
};
