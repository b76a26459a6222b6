import { connectNats, type NatsHandle } from '../nats';
import { JetStreamEventStore } from './jetstreamEventStore';
import type { Subscription } from './port';
import { startTestNatsCluster, type TestNatsCluster } from '../../../test/harness/natsServer';
import { testLogger } from '../../../test/harness/logger';

const ev = { type: 'A', schemaVersion: 1, occurredAt: '2026-11-24T10:00:00.000Z', data: {} };
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Live (non-durable) subscriptions are what every replica's read models follow the log with. Measured on 2.12.15
 * with the client's own ordered consumer: after the stream leader's node was SIGKILLed and restarted, 12 to 21 of
 * 30 subscriptions stopped for good, no error, no end (a CI drill saw a sessions replica's send ledger stop: one
 * instance's sends were never sent).
 */
describe('live subscriptions on a 3-node cluster (R3)', () => {
  let cluster: TestNatsCluster;
  const handles: NatsHandle[] = [];
  const subscriptions: Subscription[] = [];

  beforeAll(async () => {
    cluster = await startTestNatsCluster(3);
  }, 30_000);
  afterAll(async () => {
    await Promise.all(subscriptions.map((s) => s.close().catch(() => undefined)));
    for (const handle of handles) await handle.close().catch(() => undefined);
    await cluster.dispose();
  });

  it('keeps delivering every commit after the stream leader node is killed and comes back', async () => {
    const received: number[] = [];
    for (let c = 0; c < 6; c++) {
      const handle = await connectNats({ url: cluster.url, name: `live-${c}`, logger: testLogger(), replicas: 3, timeoutMs: 3_000 });
      handles.push(handle);
      const store = await JetStreamEventStore.open(handle, { logger: testLogger(), liveCheckMs: 1_000 });
      for (let s = 0; s < 2; s++) {
        const index = received.push(0) - 1;
        const subscription = await store.subscribe('*.live');
        subscriptions.push(subscription);
        void (async () => {
          for await (const delivery of subscription) received[index] = delivery.commit.sequence;
        })().catch(() => undefined);
      }
    }
    const writer = await JetStreamEventStore.open(handles[0]!);
    let last = 0;
    let writing = true;
    const writes = (async () => {
      // Bounded: about 4,000 appends in the time the test gives it.
      for (let i = 0; writing && i < 4_000; i++) {
        last = await writer
          .append(`W${i % 10}.live`, [ev], { expectedVersion: 'any', commandId: `live-${i}` })
          .then((r) => r.version)
          .catch(async () => {
            await sleep(100);
            return last;
          });
        await sleep(5);
      }
    })();
    await sleep(1_000);
    const leader = (await handles[1]!.jsm.streams.info('EVENTS')).cluster!.leader!;
    await cluster.node(leader).kill();
    await sleep(5_000);
    await cluster.node(leader).restart();
    await sleep(3_000);
    writing = false;
    await writes;
    const end = last;
    for (let i = 0; i < 100 && received.some((seq) => seq < end); i++) await sleep(200);
    expect(received.map((seq) => seq >= end)).toEqual(received.map(() => true));
  }, 60_000);
});
