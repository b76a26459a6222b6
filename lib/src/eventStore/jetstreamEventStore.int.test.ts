import { connectNats, type NatsHandle } from '../nats';
import { JetStreamEventStore } from './jetstreamEventStore';
import { isAppError } from '../errors';
import { describeEventStoreContract } from '../../../test/contract/eventStore.contract';
import { startTestNats, type TestNats } from '../../../test/harness/natsServer';
import { testLogger } from '../../../test/harness/logger';

describeEventStoreContract('JetStream', async () => {
  const nats = await startTestNats();
  const handle = await connectNats({ url: nats.url, name: 'contract', logger: testLogger() });
  const store = await JetStreamEventStore.open(handle);
  return {
    store,
    close: async () => {
      await handle.close();
      await nats.dispose();
    },
  };
});

describe('JetStream event store - outages', () => {
  let nats: TestNats;
  let handle: NatsHandle;
  let store: JetStreamEventStore;
  beforeAll(async () => {
    nats = await startTestNats();
    handle = await connectNats({ url: nats.url, name: 'outage', logger: testLogger(), timeoutMs: 2_000 });
    store = await JetStreamEventStore.open(handle);
  });
  afterAll(async () => {
    await handle.close();
    await nats.dispose();
  });

  const ev = { type: 'A', schemaVersion: 1, occurredAt: '2026-11-22T10:00:00.000Z', data: {} };

  it('fails with an unavailable error while NATS is down and works again once it is back, with its data', async () => {
    const before = await store.append('OUTAGE.instance', [ev], { expectedVersion: 0, commandId: 'outage-1' });
    await nats.stop();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const failure = await store.append('OUTAGE.instance', [ev], { expectedVersion: before.version, commandId: 'outage-2' }).catch((e: unknown) => e);
    expect(isAppError(failure) && failure.kind).toBe('unavailable');
    await nats.restart();
    const deadline = Date.now() + 10_000;
    while (!handle.isConnected() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const after = await store.append('OUTAGE.instance', [ev], { expectedVersion: before.version, commandId: 'outage-3' });
    expect(after.version).toBeGreaterThan(before.version);
    expect(await store.readStream('OUTAGE.instance')).toHaveLength(2);
  });
});
