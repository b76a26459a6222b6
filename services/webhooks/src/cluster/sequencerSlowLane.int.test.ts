import { connectNats, instanceEvent, instanceIdFor, instanceStream, JetStreamEventStore, STREAMS, type Delivery, type NatsHandle } from '@wagw/lib';
import type { Subscription as NatsSubscription } from '@nats-io/transport-node';
import { startTestNats, type TestNats } from '../../../../test/harness/natsServer';
import { testLogger } from '../../../../test/harness/logger';
import { sleep } from '../../../../test/harness/wait';
import { preferredReplica } from './assignment';
import { Sequencer, type SequencerLease, type SequencerMembers } from './sequencer';
import { serveWork, WorkSender } from './workChannel';

/** As service.ts wires it: the sequencer's ack wait is also the WorkSender's reply time-out. Above the 10 s heartbeat. */
const ACK_WAIT_MS = 12_000;
/** A slow (but answering) endpoint: each event takes this long in a replica's lane. */
const WORK_MS = 5_000;

// The real sequencer, durable subscription and work channel on a real nats-server; replicas b and c are lanes that
// work one event at a time (as router.ts does per instance). Members and lease are stand-ins.
describe('Sequencer on JetStream: an event waiting in a remote lane longer than the ack wait', () => {
  let nats: TestNats;
  let handle: NatsHandle;
  let store: JetStreamEventStore;
  const subs: NatsSubscription[] = [];
  beforeAll(async () => {
    nats = await startTestNats();
    handle = await connectNats({ url: nats.url, name: 'sequencer-int', logger: testLogger() });
    store = await JetStreamEventStore.open(handle, { streamName: STREAMS.events.name, subjectPrefix: STREAMS.events.subjectPrefix, logger: testLogger() });
  });
  afterAll(async () => {
    subs.forEach((s) => s.unsubscribe());
    await handle.close();
    await nats.dispose();
  });

  it('stays with its replica: no other replica works on the instance while the first still has its events', async () => {
    // An instance that b wins among [a, b], and c wins once c joins.
    const id = Array.from({ length: 500 }, (_, i) => instanceIdFor('acme', `slow-${i}`)).find(
      (i) => preferredReplica(i, ['a', 'b']) === 'b' && preferredReplica(i, ['a', 'b', 'c']) === 'c',
    )!;
    const log: Array<{ replica: string; sequence: number; count: number; start: number; end?: number }> = [];
    const lane = (replica: string) => {
      let tail = Promise.resolve();
      return (delivery: Delivery): void => {
        tail = tail.then(async () => {
          const entry = { replica, sequence: delivery.commit.sequence, count: delivery.deliveryCount, start: Date.now() } as (typeof log)[number];
          log.push(entry);
          await sleep(WORK_MS);
          entry.end = Date.now();
          delivery.ack();
        });
      };
    };
    subs.push(serveWork(handle.nc, 'b', lane('b')), serveWork(handle.nc, 'c', lane('c')));
    let usable = ['a', 'b'];
    const lease: SequencerLease = {
      start: async () => undefined,
      stop: async () => undefined,
      acquire: async () => true,
      owns: () => true,
      onLost: () => undefined,
      onFreed: () => undefined,
    };
    const members: SequencerMembers = { self: 'a', usable: () => usable, unreachable: () => undefined, onGone: () => undefined };
    const sender = new WorkSender(handle.nc, ACK_WAIT_MS);
    const sequencer = new Sequencer(store, lease, members, sender, () => undefined, testLogger('sequencer'), {
      ackWaitMs: ACK_WAIT_MS,
      batch: 16,
      claimEveryMs: 60_000,
      drainTimeoutMs: 100,
    });
    const at = new Date().toISOString();
    for (let i = 0; i < 3; i++) {
      await store.append(instanceStream(id), [instanceEvent('InstanceReset', at, {})], { expectedVersion: 'any', commandId: `r${i}` });
    }
    // All three are read and handed to b (the instance's replica) at once.
    await sequencer.start();
    for (let i = 0; i < 40 && log.length === 0; i++) await sleep(50);
    await sleep(500);
    // A replica joins that the instance prefers: it must move only once b has none of its events in hand.
    usable = ['a', 'b', 'c'];
    await sleep(3 * WORK_MS + 2_500);
    try {
      const bBusyUntil = Math.max(...log.filter((e) => e.replica === 'b').map((e) => e.end ?? Number.MAX_SAFE_INTEGER));
      const onCBeforeBDone = log.filter((e) => e.replica === 'c' && e.start < bBusyUntil);
      // The instance stays with b until b has finished its events: c works on none of them meanwhile.
      expect(onCBeforeBDone).toEqual([]);
      // No event is worked on by two replicas.
      for (const sequence of [1, 2, 3]) expect(new Set(log.filter((e) => e.sequence === sequence).map((e) => e.replica)).size).toBe(1);
    } finally {
      await sequencer.stop();
      sequencer.close();
      sender.close();
    }
  }, 60_000);
});
