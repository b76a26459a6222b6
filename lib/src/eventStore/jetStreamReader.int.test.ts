import { connectNats, type NatsHandle } from '../nats';
import { JetStreamEventStore } from './jetstreamEventStore';
import { startTestNats, type TestNats } from '../../../test/harness/natsServer';
import { testLogger } from '../../../test/harness/logger';

// A scan's reader may take its time between two commits (an export to a slow or paused HTTP client, a webhook replay
// waiting on a slow endpoint); that is not the server's silence. The silence limit is scaled down from 10 s.

const SILENCE_MS = 200;
const COMMITS = 3_000;

describe('JetStream event store - a scan read slowly', () => {
  let nats: TestNats;
  let handle: NatsHandle;
  let store: JetStreamEventStore;
  beforeAll(async () => {
    nats = await startTestNats();
    handle = await connectNats({ url: nats.url, name: 'slow-scan', logger: testLogger() });
    store = await JetStreamEventStore.open(handle, { scanSilenceMs: SILENCE_MS });
    const ev = { type: 'MessageReceived', schemaVersion: 1, occurredAt: '2026-11-22T10:00:00.000Z', data: { text: 'x' } };
    for (let i = 0; i < COMMITS; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) => store.append(`SLOWSCAN.message.M${i + j}`, [ev], { expectedVersion: 0, commandId: `slow-${i + j}` })),
      );
    }
  }, 60_000);
  afterAll(async () => {
    await handle.close();
    await nats.dispose();
  });

  it('reads every commit, in order, to a reader that pauses twice for several times the silence limit', async () => {
    const sequences: number[] = [];
    let error: unknown = null;
    try {
      for await (const commit of store.scanPattern('SLOWSCAN.>', 1)) {
        sequences.push(commit.sequence);
        // Once at the first commit, once inside the second batch the consumer delivers.
        if (sequences.length === 1 || sequences.length === 1_200) await new Promise((resolve) => setTimeout(resolve, SILENCE_MS * 5));
      }
    } catch (e) {
      error = e;
    }
    expect(error).toBeNull();
    expect(sequences).toEqual(Array.from({ length: COMMITS }, (_, i) => i + 1));
  }, 30_000);
});

describe('JetStream event store - reads leave nothing behind', () => {
  it('takes back the reply subscription of every read: 500 reads, no more subscriptions on the connection', async () => {
    const nats = await startTestNats();
    const handle = await connectNats({ url: nats.url, name: 'read-subs', logger: testLogger() });
    try {
      const store = await JetStreamEventStore.open(handle);
      const ev = { type: 'A', schemaVersion: 1, occurredAt: '2026-11-24T10:00:00.000Z', data: {} };
      for (let i = 0; i < 5; i++) await store.append(`SUBS.x${i}`, [ev], { expectedVersion: 0, commandId: `subs-${i}` });
      // The client's count of its subscriptions (each one is an interest the server keeps for the connection too).
      const subscriptions = (): number => (handle.nc as unknown as { protocol: { subscriptions: { size(): number } } }).protocol.subscriptions.size();
      const before = subscriptions();
      for (let i = 0; i < 500; i++) expect(await store.readStream(`SUBS.x${i % 5}`)).toHaveLength(1);
      expect((await store.readPattern('SUBS.*', 1, 100)).commits).toHaveLength(5);
      expect(subscriptions()).toBe(before);
    } finally {
      await handle.close();
      await nats.dispose();
    }
  });
});
