import { InMemoryEventStore, instanceEvent, instanceStream } from '@wagw/lib';
import { testLogger } from '../../../../test/harness/logger';
import { eventually } from '../../../../test/harness/wait';
import { InstanceRegistry } from './instanceRegistry';

describe('InstanceRegistry (application, in-memory store)', () => {
  it('tells its erasure listeners of every erasure, once each', async () => {
    const store = new InMemoryEventStore();
    const registry = new InstanceRegistry(store, testLogger());
    const erased: string[] = [];
    registry.onErased((id) => erased.push(id));
    registry.start();
    const at = new Date().toISOString();
    const append = (...events: Parameters<typeof instanceEvent>[]) =>
      store.append(
        instanceStream('REG1'),
        events.map((e) => instanceEvent(...e)),
        { expectedVersion: 'any', commandId: `c-${Math.random()}` },
      );
    await append(['InstanceCreated', at, { instance_id: 'REG1', account: 'acme' }]);
    await append(['InstanceDataErased', at, {}]);
    await append(['InstanceConnecting', at, {}]);
    await append(['InstanceDataErased', new Date(Date.parse(at) + 1).toISOString(), {}]);
    expect(
      await eventually(
        async () => erased,
        (e) => e.length === 2,
        2_000,
      ),
    ).toEqual(['REG1', 'REG1']);
    await registry.stop();
  });
});
